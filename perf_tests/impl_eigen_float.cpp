// The float half of the Eigen peer (see impl_eigen.hpp).
#include "impl_eigen.hpp"

namespace bench {
template void add_eigen<float>(ImplList<float>&);
}  // namespace bench
