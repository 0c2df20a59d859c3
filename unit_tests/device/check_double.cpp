// double half of the device compile check (see instantiate.hpp).
#include "device/instantiate.hpp"

void ibla_device_check::check_double() { instantiate_layouts<double>(37, 3); }
