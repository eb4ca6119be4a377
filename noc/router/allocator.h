// SPDX-License-Identifier: MIT
#pragma once
// Allocators match requesters (inputs) to resources (outputs): the VC allocator matches input
// VCs to output VCs, the switch allocator input ports to output ports.
//
// Contract: between clear() and allocate() the owner adds requests (input, output), each pair
// at most once; allocate() produces a matching (each input and each output used at most once,
// every match a request) and updates the allocator's priority state; matched_output(i) is the
// output granted to input i or -1. Costs O(requests) per call, never allocates memory once
// warm. Priority state persists across cycles; that is what makes arbitration fair.
#include <memory>
#include <string>
#include <vector>

namespace nocflow::noc {

class Allocator {
 public:
  Allocator(int inputs, int outputs);
  virtual ~Allocator() = default;

  void clear();
  void request(int input, int output) { requests_.push_back({input, output}); }
  virtual void allocate() = 0;
  int matched_output(int input) const { return out_of_[input]; }
  bool empty() const { return requests_.empty(); }
  /// Inputs that were matched by the last allocate(), in no particular order.
  const std::vector<int>& matched_inputs() const { return matched_; }

 protected:
  struct Request {
    int input, output;
  };
  int inputs_, outputs_;
  std::vector<Request> requests_;
  std::vector<int> out_of_, in_of_, matched_;
};

/// iSLIP (McKeown): each output grants the requesting input nearest at or after its grant
/// pointer; each input accepts the granting output nearest at or after its accept pointer;
/// pointers move one past the match only for matches made in the first iteration.
/// `iterations` rounds repeat this among still-unmatched inputs and outputs.
std::unique_ptr<Allocator> make_islip(int inputs, int outputs, int iterations);

/// Separable input-first: each input picks one output by round-robin, then each output picks
/// one of the inputs that chose it by round-robin; pointers move past winners.
std::unique_ptr<Allocator> make_separable(int inputs, int outputs);

/// By name (islip, separable); unknown names throw InputError listing the known ones.
std::unique_ptr<Allocator> make_allocator(const std::string& name, int inputs, int outputs,
                                          int iterations);
std::vector<std::string> allocator_names();

}  // namespace nocflow::noc
