// float half of the device compile check (see instantiate.hpp).
#include "device/instantiate.hpp"

void ibla_device_check::check_float() { instantiate_layouts<float>(37, 3); }
