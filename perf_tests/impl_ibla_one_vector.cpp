// ibla on blocks of 64 bytes of lanes (see impl_ibla.hpp), ibla on the
// user's strided storage (IblaOnStrided, whose packed blocks run the same
// kernels), and the factory that gathers every block size.
#include "impl_ibla.hpp"

namespace bench {

template void add_ibla_blocks<float, 64>(ImplList<float>&);
template void add_ibla_blocks<double, 64>(ImplList<double>&);
template void add_ibla_on_strided<float>(ImplList<float>&);
template void add_ibla_on_strided<double>(ImplList<double>&);
// Instantiated in impl_ibla_two_vectors.cpp: without these declarations the
// factory below compiled the 128-byte kernels here a second time (this unit
// took twice as long as the other block sizes').
extern template void add_ibla_blocks<float, 128>(ImplList<float>&);
extern template void add_ibla_blocks<double, 128>(ImplList<double>&);

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
#ifdef IBLA_BENCH_CHECK_ONLY
  add_ibla_blocks<T, 64>(out);
  add_ibla_on_strided<T>(out);
#else
  add_ibla_register_blocks<T>(out);
  add_ibla_blocks<T, 64>(out);
  add_ibla_blocks<T, 128>(out);
  add_ibla_on_strided<T>(out);
#endif
}

template void add_ibla<float>(ImplList<float>&);
template void add_ibla<double>(ImplList<double>&);

}  // namespace bench
