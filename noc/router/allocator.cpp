// SPDX-License-Identifier: MIT
#include "noc/router/allocator.h"

#include <algorithm>

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::noc {

Allocator::Allocator(int inputs, int outputs, bool use_masks)
    : inputs_(inputs),
      outputs_(outputs),
      small_(use_masks && inputs <= 64 && outputs <= 64),
      out_req_(small_ ? outputs : 0, 0),
      out_of_(inputs, -1),
      in_of_(outputs, -1) {}

void Allocator::forget_matches() {
  for (int i : matched_) {
    in_of_[out_of_[i]] = -1;
    out_of_[i] = -1;
  }
  matched_.clear();
}

int Allocator::allocate_single(int input, std::uint64_t outputs) {
  for (; outputs; outputs &= outputs - 1) request(input, __builtin_ctzll(outputs));
  allocate();
  return out_of_[input];
}

void Allocator::forget_requests() {
  for (std::uint64_t m = active_outputs_; m; m &= m - 1) out_req_[__builtin_ctzll(m)] = 0;
  active_outputs_ = active_inputs_ = 0;
  requests_.clear();
}

namespace {

/// The first set bit at or after `start`, wrapping around (mask must not be 0).
inline int first_from(std::uint64_t mask, int start) {
  const std::uint64_t high = mask & (~std::uint64_t{0} << start);
  return __builtin_ctzll(high ? high : mask);
}

/// Distance from pointer `from` forward to `to` on a ring of size n.
inline int ahead(int to, int from, int n) {
  const int d = to - from;
  return d < 0 ? d + n : d;
}

class Islip final : public Allocator {
 public:
  Islip(int inputs, int outputs, int iterations)
      : Allocator(inputs, outputs, true),
        iterations_(iterations),
        grant_ptr_(outputs, 0),
        accept_ptr_(inputs, 0),
        granted_to_(outputs, -1),
        accepted_from_(inputs, -1),
        grants_(small_ ? inputs : 0, 0) {}

  void reset_priorities() override {
    std::fill(grant_ptr_.begin(), grant_ptr_.end(), 0);
    std::fill(accept_ptr_.begin(), accept_ptr_.end(), 0);
  }

  int allocate_single(int input, std::uint64_t outputs) override {
    forget_matches();
    if (!outputs) return -1;
    // Every requested output grants the lone input; it accepts the first at/after its pointer.
    const int o = first_from(outputs, accept_ptr_[input]);
    record(input, o);
    return o;
  }

  void match() override {
    if (small_) {
      allocate_small();
      return;
    }
    for (int it = 0; it < iterations_; ++it) {
      // Grant: each free output picks among requests from free inputs.
      for (const Request& r : requests_) {
        if (out_of_[r.input] >= 0 || in_of_[r.output] >= 0) continue;
        int& g = granted_to_[r.output];
        if (g < 0 || ahead(r.input, grant_ptr_[r.output], inputs_) <
                         ahead(g, grant_ptr_[r.output], inputs_))
          g = r.input;
      }
      // Accept: each input picks among the outputs that granted it.
      for (const Request& r : requests_) {
        if (granted_to_[r.output] != r.input) continue;
        int& a = accepted_from_[r.input];
        if (a < 0 || ahead(r.output, accept_ptr_[r.input], outputs_) <
                         ahead(a, accept_ptr_[r.input], outputs_))
          a = r.output;
      }
      bool progress = false;
      for (const Request& r : requests_) {
        if (accepted_from_[r.input] == r.output && out_of_[r.input] < 0) {
          out_of_[r.input] = r.output;
          in_of_[r.output] = r.input;
          matched_.push_back(r.input);
          progress = true;
          if (it == 0) {
            grant_ptr_[r.output] = r.input + 1 == inputs_ ? 0 : r.input + 1;
            accept_ptr_[r.input] = r.output + 1 == outputs_ ? 0 : r.output + 1;
          }
        }
      }
      for (const Request& r : requests_) {
        granted_to_[r.output] = -1;
        accepted_from_[r.input] = -1;
      }
      if (!progress) break;
    }
  }

 private:
  /// A first-iteration match: record it and move both pointers one past it.
  void record(int i, int o) {
    out_of_[i] = o;
    in_of_[o] = i;
    matched_.push_back(i);
    grant_ptr_[o] = i + 1 == inputs_ ? 0 : i + 1;
    accept_ptr_[i] = o + 1 == outputs_ ? 0 : o + 1;
  }

  /// The same algorithm on bit masks: one find-first-set per grant and per accept.
  void allocate_small() {
    if (!(active_inputs_ & (active_inputs_ - 1))) {
      // One requester: every output it asks grants it, and it accepts the first output at or
      // after its accept pointer. Exactly what the general loop below computes, cheaper.
      if (!active_inputs_) return;
      const int i = __builtin_ctzll(active_inputs_);
      record(i, first_from(active_outputs_, accept_ptr_[i]));
      return;
    }
    std::uint64_t free_in = ~std::uint64_t{0}, free_out = active_outputs_;
    for (int it = 0; it < iterations_ && free_out; ++it) {
      std::uint64_t granted_inputs = 0;
      for (std::uint64_t m = free_out; m; m &= m - 1) {
        const int o = __builtin_ctzll(m);
        const std::uint64_t req = out_req_[o] & free_in;
        if (!req) continue;
        const int i = first_from(req, grant_ptr_[o]);
        grants_[i] |= std::uint64_t{1} << o;
        granted_inputs |= std::uint64_t{1} << i;
      }
      if (!granted_inputs) break;
      for (std::uint64_t m = granted_inputs; m; m &= m - 1) {
        const int i = __builtin_ctzll(m);
        const int o = first_from(grants_[i], accept_ptr_[i]);
        grants_[i] = 0;
        out_of_[i] = o;
        in_of_[o] = i;
        matched_.push_back(i);
        free_in &= ~(std::uint64_t{1} << i);
        free_out &= ~(std::uint64_t{1} << o);
        if (it == 0) {
          grant_ptr_[o] = i + 1 == inputs_ ? 0 : i + 1;
          accept_ptr_[i] = o + 1 == outputs_ ? 0 : o + 1;
        }
      }
    }
  }

  int iterations_;
  std::vector<int> grant_ptr_, accept_ptr_, granted_to_, accepted_from_;
  std::vector<std::uint64_t> grants_;  ///< small path: per input, outputs that granted it
};

class Separable final : public Allocator {
 public:
  Separable(int inputs, int outputs)
      : Allocator(inputs, outputs, false),
        input_ptr_(inputs, 0),
        output_ptr_(outputs, 0),
        choice_(inputs, -1),
        winner_(outputs, -1) {}

  void reset_priorities() override {
    std::fill(input_ptr_.begin(), input_ptr_.end(), 0);
    std::fill(output_ptr_.begin(), output_ptr_.end(), 0);
  }

  void match() override {
    for (const Request& r : requests_) {  // input arbitration
      int& c = choice_[r.input];
      if (c < 0 || ahead(r.output, input_ptr_[r.input], outputs_) <
                       ahead(c, input_ptr_[r.input], outputs_))
        c = r.output;
    }
    for (const Request& r : requests_) {  // output arbitration among the chosen
      if (choice_[r.input] != r.output) continue;
      int& w = winner_[r.output];
      if (w < 0 || ahead(r.input, output_ptr_[r.output], inputs_) <
                       ahead(w, output_ptr_[r.output], inputs_))
        w = r.input;
    }
    for (const Request& r : requests_) {
      if (winner_[r.output] == r.input && choice_[r.input] == r.output && out_of_[r.input] < 0) {
        out_of_[r.input] = r.output;
        in_of_[r.output] = r.input;
        matched_.push_back(r.input);
        input_ptr_[r.input] = r.output + 1 == outputs_ ? 0 : r.output + 1;
        output_ptr_[r.output] = r.input + 1 == inputs_ ? 0 : r.input + 1;
      }
    }
    for (const Request& r : requests_) {
      choice_[r.input] = -1;
      winner_[r.output] = -1;
    }
  }

 private:
  std::vector<int> input_ptr_, output_ptr_, choice_, winner_;
};

}  // namespace

std::unique_ptr<Allocator> make_islip(int inputs, int outputs, int iterations) {
  return std::make_unique<Islip>(inputs, outputs, iterations);
}

std::unique_ptr<Allocator> make_separable(int inputs, int outputs) {
  return std::make_unique<Separable>(inputs, outputs);
}

std::vector<std::string> allocator_names() { return {"islip", "separable"}; }

std::unique_ptr<Allocator> make_allocator(const std::string& name, int inputs, int outputs,
                                          int iterations) {
  if (name == "islip") return make_islip(inputs, outputs, iterations);
  if (name == "separable") return make_separable(inputs, outputs);
  throw InputError("router allocator: " + unknown_name_message("allocator", name, allocator_names()));
}

}  // namespace nocflow::noc
