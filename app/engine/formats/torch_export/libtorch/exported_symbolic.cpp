// The Python functions an exported graph calls on SymInts, floats and bools (operator.add,
// torch.sym_max, math.ceil, ...), as Python computes them (floor division and modulo round towards
// negative infinity).
#include "exported_steps.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

namespace scriptscope::detail {

SymFunction symFunction(const std::string& target) {
    using V = std::vector<c10::IValue>;
    const auto number = [](const c10::IValue& v) {
        return v.isDouble() ? v.toDouble() : v.isBool() ? double(v.toBool()) : double(v.toInt());
    };
    const auto integral = [](const V& a) {
        return std::all_of(a.begin(), a.end(),
                           [](const c10::IValue& v) { return v.isInt() || v.isBool(); });
    };
    const auto integer = [](const c10::IValue& v) {
        return v.isBool() ? int64_t(v.toBool()) : v.toInt();
    };
    const auto arithmetic = [=](auto ints, auto floats) -> SymFunction {
        return [=](const V& a) -> c10::IValue {
            TORCH_CHECK(a.size() == 2, "takes two arguments");
            if (integral(a)) {
                return ints(integer(a[0]), integer(a[1]));
            }
            return floats(number(a[0]), number(a[1]));
        };
    };
    const auto compare = [=](auto op) -> SymFunction {
        return [=](const V& a) -> c10::IValue {
            TORCH_CHECK(a.size() == 2, "takes two arguments");
            return op(number(a[0]), number(a[1]));
        };
    };
    static const std::map<std::string, std::function<SymFunction()>> functions = {
        {"_operator.add", [=] { return arithmetic(std::plus<int64_t>(), std::plus<double>()); }},
        {"_operator.sub", [=] { return arithmetic(std::minus<int64_t>(), std::minus<double>()); }},
        {"_operator.mul",
         [=] { return arithmetic(std::multiplies<int64_t>(), std::multiplies<double>()); }},
        {"_operator.floordiv",
         [=] {
             return arithmetic(
                 [](int64_t x, int64_t y) {
                     TORCH_CHECK(y != 0, "integer division by zero");
                     const int64_t q = x / y;
                     return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
                 },
                 [](double x, double y) { return std::floor(x / y); });
         }},
        {"_operator.mod",
         [=] {
             return arithmetic(
                 [](int64_t x, int64_t y) {
                     TORCH_CHECK(y != 0, "integer modulo by zero");
                     const int64_t r = x % y;
                     return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
                 },
                 [](double x, double y) { return x - std::floor(x / y) * y; });
         }},
        {"_operator.truediv",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 2, "takes two arguments");
                 return number(a[0]) / number(a[1]);
             });
         }},
        {"_operator.pow",
         [=] {
             return arithmetic(
                 [](int64_t x, int64_t y) {
                     return static_cast<int64_t>(std::llround(std::pow(x, y)));
                 },
                 [](double x, double y) { return std::pow(x, y); });
         }},
        {"torch.sym_max",
         [=] {
             return arithmetic([](int64_t x, int64_t y) { return std::max(x, y); },
                               [](double x, double y) { return std::max(x, y); });
         }},
        {"torch.sym_min",
         [=] {
             return arithmetic([](int64_t x, int64_t y) { return std::min(x, y); },
                               [](double x, double y) { return std::min(x, y); });
         }},
        {"_operator.eq", [=] { return compare(std::equal_to<double>()); }},
        {"_operator.ne", [=] { return compare(std::not_equal_to<double>()); }},
        {"_operator.lt", [=] { return compare(std::less<double>()); }},
        {"_operator.le", [=] { return compare(std::less_equal<double>()); }},
        {"_operator.gt", [=] { return compare(std::greater<double>()); }},
        {"_operator.ge", [=] { return compare(std::greater_equal<double>()); }},
        {"_operator.and_",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 2, "takes two arguments");
                 return number(a[0]) != 0 && number(a[1]) != 0;
             });
         }},
        {"_operator.or_",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 2, "takes two arguments");
                 return number(a[0]) != 0 || number(a[1]) != 0;
             });
         }},
        {"_operator.neg",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 1, "takes one argument");
                 return a[0].isDouble() ? c10::IValue(-a[0].toDouble())
                                        : c10::IValue(-integer(a[0]));
             });
         }},
        {"torch.sym_not",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 1, "takes one argument");
                 return number(a[0]) == 0;
             });
         }},
        {"torch.sym_float",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 1, "takes one argument");
                 return number(a[0]);
             });
         }},
        {"torch.sym_int",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 1, "takes one argument");
                 return static_cast<int64_t>(std::trunc(number(a[0])));
             });
         }},
        {"math.ceil",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 1, "takes one argument");
                 return static_cast<int64_t>(std::ceil(number(a[0])));
             });
         }},
        {"math.floor",
         [=] {
             return SymFunction([=](const V& a) -> c10::IValue {
                 TORCH_CHECK(a.size() == 1, "takes one argument");
                 return static_cast<int64_t>(std::floor(number(a[0])));
             });
         }},
    };
    const auto found = functions.find(target);
    return found == functions.end() ? SymFunction() : found->second();
}

} // namespace scriptscope::detail
