#pragma once
/// @file
/// The base of every algorithm's options struct (algo::CloveOptions, ...): an algorithm header
/// includes this, not the registry (algo/registry.hpp), which includes every algorithm's options.

#include <memory>
#include <string>

#include <cflrun/core/option_visitor.hpp>

namespace cflrun::algo {

/// Base of an algorithm's options struct: supplies clone(). `Derived` lists its options in visit()
/// (core::OptionGroup).
template <class Derived>
class Options : public core::OptionGroup {
 public:
  std::unique_ptr<core::OptionGroup> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

/// The options of an algorithm that has none of its own.
class NoOptions : public Options<NoOptions> {
 public:
  std::string title() const override { return ""; }
  void visit(core::OptionVisitor& /*visitor*/) override {}
};

}  // namespace cflrun::algo
