// SPDX-License-Identifier: MIT
#pragma once
// Allocators match requesters (inputs) to resources (outputs): the VC allocator matches input
// VCs to output VCs, the switch allocator input ports to output ports.
//
// Contract: the owner adds requests (input, output), each pair at most once; allocate() matches
// the requests added since the previous allocate() (each input and each output used at most
// once, every match a request), updates the allocator's priority state and forgets the
// requests. Until the next allocate(), matched_output(i) is the output granted to input i or
// -1. Costs O(requests) per call, never allocates memory once warm. Priority state persists
// across cycles; that is what makes arbitration fair.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nocflow::noc {

class Allocator {
 public:
  /// use_masks: keep requests as bit masks instead of a list (at most 64 inputs and outputs).
  Allocator(int inputs, int outputs, bool use_masks);
  virtual ~Allocator() = default;

  void request(int input, int output) {
    if (small_) {
      out_req_[output] |= std::uint64_t{1} << input;
      active_outputs_ |= std::uint64_t{1} << output;
      active_inputs_ |= std::uint64_t{1} << input;
    } else {
      requests_.push_back({input, output});
    }
  }
  /// Exactly request(input, o) for every bit o of `outputs` (outputs 0..63), in increasing o.
  void request_outputs(int input, std::uint64_t outputs) {
    if (small_) {  // one mask update per output, the input and output sets updated once
      const std::uint64_t bit = std::uint64_t{1} << input;
      active_inputs_ |= bit;
      active_outputs_ |= outputs;
      for (; outputs; outputs &= outputs - 1) out_req_[__builtin_ctzll(outputs)] |= bit;
    } else {
      for (; outputs; outputs &= outputs - 1)
        requests_.push_back({input, __builtin_ctzll(outputs)});
    }
  }
  /// Match the pending requests (see the contract above).
  void allocate() {
    forget_matches();
    match();
    forget_requests();
  }
  /// For a lone requester: exactly request(input, o) for every bit o of `outputs` (outputs
  /// 0..63), then allocate(), with no other requests pending. Returns the output or -1.
  virtual int allocate_single(int input, std::uint64_t outputs);
  /// Back to a new allocator's priority state (the pointers arbitration starts from).
  virtual void reset_priorities() = 0;
  int matched_output(int input) const { return out_of_[input]; }
  bool empty() const { return requests_.empty() && !active_inputs_; }
  /// Inputs that were matched by the last allocate(), in no particular order.
  const std::vector<int>& matched_inputs() const { return matched_; }

 protected:
  virtual void match() = 0;
  void forget_matches();
  void forget_requests();

  struct Request {
    int input, output;
  };
  int inputs_, outputs_;
  std::vector<Request> requests_;
  // With use_masks, requests are kept as bit masks instead of in requests_.
  bool small_;
  std::vector<std::uint64_t> out_req_;  ///< per output: requesting inputs
  std::uint64_t active_outputs_ = 0;    ///< outputs with a request
  std::uint64_t active_inputs_ = 0;     ///< inputs with a request
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
