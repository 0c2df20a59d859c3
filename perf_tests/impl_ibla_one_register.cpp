// ibla on blocks of one SIMD register of lanes where that is narrower than
// 64 bytes (AVX2, SSE, NEON; see impl_ibla.hpp). Nothing on AVX-512, whose
// register is the 64-byte block already.
#include "impl_ibla.hpp"

namespace bench {

template <class T>
void add_ibla_register_blocks(ImplList<T>& out) {
  if constexpr (ibla::host_simd_bytes < 64) add_ibla_blocks<T, ibla::host_simd_bytes>(out);
  else (void)out;
}

template void add_ibla_register_blocks<float>(ImplList<float>&);
template void add_ibla_register_blocks<double>(ImplList<double>&);

}  // namespace bench
