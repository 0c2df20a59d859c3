// ibla: Interleaved Batched Linear Algebra on Kokkos. The one public header.
#pragma once

#include <ibla/core/error.hpp>
#include <ibla/core/lanes.hpp>
#include <ibla/core/registers.hpp>
#include <ibla/core/types.hpp>
#include <ibla/layouts/lane_block.hpp>
#include <ibla/layouts/deep_copy.hpp>
#include <ibla/layouts/layouts.hpp>
#include <ibla/layouts/pointer_array.hpp>
#include <ibla/kernels/convert.hpp>
#include <ibla/kernels/gemm.hpp>
#include <ibla/kernels/gesv.hpp>
#include <ibla/kernels/getrf.hpp>
#include <ibla/kernels/posv.hpp>
#include <ibla/kernels/potrf.hpp>
#include <ibla/kernels/trsm.hpp>
