#pragma once
// Hostile HDF5 isolated (docs/robustness.md "Hostile HDF5 isolated").
//
// libhdf5 1.10.8 (Debian 12) crashes, overflows buffers and loops forever on some corrupt
// metadata, before any check of dgq's can run. So before dgq reads a file that comes from
// outside, a forked child opens it and walks its metadata (metadata_walk.hpp) under an
// address-space limit and a deadline. A child that dies, fails or runs out of time becomes
//   InputError("FILE: damaged HDF5 metadata (...)")
// and the parent never touches the file. A file that passed is remembered by its identity
// (device, inode, size, modification and status-change times), so opening it again costs
// nothing; so is a file this process has just written and closed itself (remember_written_here),
// which is what keeps a sweep, which rewrites its results file after every pass and reads it
// back before the next, from paying a walk of the whole file each time.
//
// Knobs (environment): DGQ_HDF5_CHECK_TIMEOUT, the child's deadline in seconds (default 60).
// The child may allocate 1 GiB more than the parent had (RLIMIT_DATA; with or without
// AddressSanitizer); an allocation refused inside libhdf5 during the walk is damage too, since
// the parent would otherwise grant it.
#include <hdf5.h>

#include <cstddef>
#include <functional>
#include <string>

namespace dgq::sim::h5 {

// Opens the file in the child; returns an HDF5 file id (or < 0 when it cannot be opened:
// that is not damage, the parent reports it with its usual message).
using OpenInChild = std::function<hid_t()>;

// Throws InputError(name + ": damaged HDF5 metadata (...)") when walking the metadata kills,
// fails or stalls the child. `remember` = the check may be skipped next time for the same
// unchanged file on disk (false for in-memory images).
void check_metadata_isolated(const std::string& name, const OpenInChild& open, bool remember, unsigned timeout_seconds);
void check_metadata_isolated(const std::string& name, const OpenInChild& open, bool remember);

// Marks PATH, as it is on disk now, as checked: called by this process's writers once they have
// closed and renamed a file of their own (h5::PartialOutput, PartialFile). Any later change to the
// file (another inode, size or time) makes the next open check it again.
void remember_written_here(const std::string& path);

// True when PATH, as it is on disk now, is a file this process wrote, closed and remembered
// (remember_written_here) and nothing has touched since. Only such a file may be opened for
// writing again without a check (h5::open_own_copy_readwrite): a file that merely passed the
// read walk was never tried by libhdf5's writing paths.
bool is_written_here(const std::string& path);

// Seconds allowed to the child (DGQ_HDF5_CHECK_TIMEOUT, default 60; at least 1).
unsigned metadata_check_timeout_seconds();

// How many children this process has started (tests: a file checked once is not re-checked).
std::size_t metadata_checks_started();

}  // namespace dgq::sim::h5
