// ibla on blocks of one 64-byte vector of lanes (see impl_ibla.hpp), and the
// factory that gathers both block sizes.
#include "impl_ibla.hpp"

namespace bench {

template void add_ibla_blocks<float, 1>(ImplList<float>&);
template void add_ibla_blocks<double, 1>(ImplList<double>&);

std::string ibla_ops_available() {
  std::string s = "gemm";
  for (auto [op, name] : {std::pair{OpKind::trsm, "trsm"}, std::pair{OpKind::potrf, "potrf"},
                          std::pair{OpKind::getrf, "getrf"}, std::pair{OpKind::posv, "posv"},
                          std::pair{OpKind::gesv, "gesv"}})
    if (ibla_has(op)) s += std::string(" ") + name;
  return s;
}

template <class T>
void add_ibla(ImplList<T>& out) {
  add_ibla_blocks<T, 1>(out);
  add_ibla_blocks<T, 2>(out);
}

template void add_ibla<float>(ImplList<float>&);
template void add_ibla<double>(ImplList<double>&);

}  // namespace bench
