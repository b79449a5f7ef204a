// The values inside a torch.export archive's JSON (pt2_reader.h), as Python prints them: argument
// unions ({"as_tensor": {"name": "x"}}), numbers, strings, dtypes, devices and sympy expressions.
// Internal to the archive layer: the reader and its tests use it.
#pragma once

#include "pt2_reader.h"

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace scriptscope::pt2 {

// The reader keeps the archive's key order (range constraints print in it).
using json = nlohmann::ordered_json;

// A member of an object, or null.
const json& member(const json& object, const char* key);
std::string stringOf(const json& value);
// The one member of a serialized union ({"as_tensor": {...}}): its name and value.
std::pair<std::string, const json*> unionOf(const json& value);

// Python's repr() of a str, of a number (NaN and infinities included).
std::string pythonString(const std::string& text);
std::string numberText(const json& value);

// torch.float32 ... as the serializer's ScalarType numbers them: {"float32", "f32"}.
std::pair<std::string, std::string> dtypeNames(int code);
std::string deviceText(const json& device); // "cpu", "cuda:0"

// A SymInt (as_int, as_expr with sympy's srepr, as_name) as Python's str() shows it: "s77".
std::string symIntText(const json& value);
Pt2TensorMeta tensorMeta(const json& meta);

std::string tensorName(const json& value);
std::string symText(const json& value);

// How an argument is written: the generated code writes repr() of each value
// (print(exported_program)), str(graph) writes str() ('abc' there is abc, a device is cuda:0).
enum class ArgumentStyle { Repr, Str };
std::string argumentText(const json& argument, int depth,
                         ArgumentStyle style = ArgumentStyle::Repr);
// An argument as a value (Pt2Value::Kind::Other for what the interpreter does not run).
Pt2Value argumentValue(const json& argument);

// The graph values (tensors, SymInts by name) an argument reads, added to `out` once each, in
// order.
void argumentValues(const json& argument, std::vector<std::string>& out, int depth = 0);

} // namespace scriptscope::pt2
