// ibla on blocks of 128 bytes of lanes (see impl_ibla.hpp).
#include "impl_ibla.hpp"

namespace bench {

template void add_ibla_blocks<float, 128>(ImplList<float>&);
template void add_ibla_blocks<double, 128>(ImplList<double>&);

}  // namespace bench
