// ibla on blocks of two 64-byte vectors of lanes (see impl_ibla.hpp).
#include "impl_ibla.hpp"

namespace bench {

template void add_ibla_blocks<float, 2>(ImplList<float>&);
template void add_ibla_blocks<double, 2>(ImplList<double>&);

}  // namespace bench
