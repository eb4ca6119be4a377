// SPDX-License-Identifier: MIT
#include "noc/router/allocator.h"

#include "noc/base/error.h"
#include "noc/base/names.h"

namespace nocflow::noc {

Allocator::Allocator(int inputs, int outputs)
    : inputs_(inputs), outputs_(outputs), out_of_(inputs, -1), in_of_(outputs, -1) {}

void Allocator::clear() {
  for (int i : matched_) {
    in_of_[out_of_[i]] = -1;
    out_of_[i] = -1;
  }
  matched_.clear();
  requests_.clear();
}

namespace {

/// Distance from pointer `from` forward to `to` on a ring of size n.
inline int ahead(int to, int from, int n) {
  const int d = to - from;
  return d < 0 ? d + n : d;
}

class Islip final : public Allocator {
 public:
  Islip(int inputs, int outputs, int iterations)
      : Allocator(inputs, outputs),
        iterations_(iterations),
        grant_ptr_(outputs, 0),
        accept_ptr_(inputs, 0),
        granted_to_(outputs, -1),
        accepted_from_(inputs, -1) {}

  void allocate() override {
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
  int iterations_;
  std::vector<int> grant_ptr_, accept_ptr_, granted_to_, accepted_from_;
};

class Separable final : public Allocator {
 public:
  Separable(int inputs, int outputs)
      : Allocator(inputs, outputs),
        input_ptr_(inputs, 0),
        output_ptr_(outputs, 0),
        choice_(inputs, -1),
        winner_(outputs, -1) {}

  void allocate() override {
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
