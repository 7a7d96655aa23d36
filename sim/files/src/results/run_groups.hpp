#pragma once
// Copying and comparing run groups: what the results writer and `dgq merge` share.
#include <hdf5.h>

#include <cstddef>
#include <set>
#include <string>

namespace dgq::sim {

// What a comparison leaves out at the top level of the two objects compared (the members'
// own attributes and members are all compared): a file's root without its runs, a run
// without its provenance.
struct DiffSkip {
  std::set<std::string> attributes, members;
};
// "" when the two run groups (or any two groups) are identical, else the first difference:
// its path and what ("attribute ctx: different values (128 vs 256)", "different members (only
// in the first: logits)").
std::string diff_run_groups(hid_t a, hid_t b, const std::string& where, const DiffSkip& skip = {});

// The objects met while walking a run group (file address of each); a run is a tree, so
// enter() throws InputError("<where>: object reached twice (hard-link cycle?)") for an object
// seen before, and past kMaxObjects objects.
class VisitedObjects {
 public:
  static constexpr std::size_t kMaxObjects = 1 << 20;
  void enter(hid_t object, const std::string& where);

 private:
  std::set<haddr_t> seen_;
};

// Throws InputError("<where>: is a soft or external link") unless parent/name is a hard link.
void require_hard_link(hid_t parent, const std::string& name, const std::string& where);

// Copies the run group src_runs/name to dst_runs/name by plain reads and writes (not H5Ocopy,
// which follows corrupt global-heap ids into crashes inside libhdf5 1.10.8): groups,
// datasets (same type, shape and creation properties) and attributes; every dataset's shape
// is checked against its stored bytes first, and an object reached twice is refused.
// dst_name: the copy's name in dst_runs (default: the same name).
void copy_run_group(hid_t src_runs, hid_t dst_runs, const std::string& name, const std::string& context,
                    const std::string& dst_name = "");
// The same reads and writes for a file's root: src's attributes but those in skip.attributes
// and its members but those in skip.members, into dst.
void copy_group_except(hid_t src, hid_t dst, const std::string& where, const DiffSkip& skip);
}  // namespace dgq::sim
