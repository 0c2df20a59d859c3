// ibla called on the user's strided storage itself, nothing converted (see
// IblaOnStrided in impl_ibla.hpp): its own unit, so that its instances (every
// operation on LayoutStride Views) compile beside the block sizes' units.
#include "impl_ibla.hpp"

namespace bench {

template void add_ibla_on_strided<float>(ImplList<float>&);
template void add_ibla_on_strided<double>(ImplList<double>&);

}  // namespace bench
