// Who asks, as the queues see a request's client without its HTTP request (job_access.hpp makes
// these from one): the class a job is recorded under, whose permissions decide which files it may
// name, the highest priority it may ask for, and which jobs it may see.
#pragma once
#include <string>

#include "supervisor/intake/input_access.hpp"
#include "supervisor/store/job_store.hpp"

namespace cuzk::sup {

// A submission's client.
struct Client {
  std::string submitter;  // how its jobs are stored (job_access.hpp's submitter_of)
  FileReader reader;      // whose permissions decide which files it may name
  Priority highest = Priority::Normal;
};

// Which jobs a client may see and cancel, as a value that outlives its request (a shared store's
// reads check the owner on its own thread): every job for an operator, else those its class
// submitted, and those stored before submitters were recorded ("").
struct Viewer {
  bool operator_ = false;  // root or the daemon's user on the socket, or the admin token
  std::string submitter;
  bool operator()(const std::string& owner) const {
    return owner.empty() || operator_ || (owner == submitter && owner != "unix:?");
  }
};

}  // namespace cuzk::sup
