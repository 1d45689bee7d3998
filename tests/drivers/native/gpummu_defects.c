/* Broken GpuMmu variants of the example C driver, for check-driver's tests (decision 0125).
 *
 * The example driver (examples/drivers/refgpu/refgpu_paging.c, on the include path) is compiled unchanged; its
 * DxgkDdiBuildPagingBuffer is renamed and wrapped here, and GPUMMU_DEFECT picks the one defect the wrapper plants:
 *   0 none (the wrapper passes every call through)
 *   1 FillVirtual fills one page more than FillSizeInBytes
 *   2 SignalMonitoredFence writes only the low 32 bits of MonitoredFenceValue
 *   3 TransferVirtual adds AllocationOffsetInBytes to the source VA (the documents say it never is)
 *   4 Transfer answers STATUS_GRAPHICS_ALLOCATION_BUSY even with Flags.AllocationIsIdle set
 *   5 Transfer answers STATUS_GRAPHICS_ALLOCATION_BUSY until Flags.AllocationIsIdle is set (legal: no defect)
 *   6 FillVirtual answers STATUS_GRAPHICS_ALLOCATION_BUSY (legal only for Transfer, DiscardContent and
 *     SpecialLockTransfer) */
#define DxgkDdiBuildPagingBuffer RefgpuExampleBuildPagingBuffer
#include "refgpu_paging.c"
#undef DxgkDdiBuildPagingBuffer

#ifndef GPUMMU_DEFECT
#define GPUMMU_DEFECT 0
#endif

NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs);

REFGPU_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    NTSTATUS status;
    switch (pArgs->Operation) {
#if GPUMMU_DEFECT == 1
    case DXGK_OPERATION_VIRTUAL_FILL: {
        const D3DGPU_SIZE_T size = pArgs->FillVirtual.FillSizeInBytes;
        pArgs->FillVirtual.FillSizeInBytes = size + PAGE_BYTES;
        status = RefgpuExampleBuildPagingBuffer(hAdapter, pArgs);
        pArgs->FillVirtual.FillSizeInBytes = size;
        return status;
    }
#elif GPUMMU_DEFECT == 2
    case DXGK_OPERATION_SIGNAL_MONITORED_FENCE: {
        const UINT64 value = pArgs->SignalMonitoredFence.MonitoredFenceValue;
        pArgs->SignalMonitoredFence.MonitoredFenceValue = (uint32_t)value;
        status = RefgpuExampleBuildPagingBuffer(hAdapter, pArgs);
        pArgs->SignalMonitoredFence.MonitoredFenceValue = value;
        return status;
    }
#elif GPUMMU_DEFECT == 3
    case DXGK_OPERATION_VIRTUAL_TRANSFER: {
        const D3DGPU_VIRTUAL_ADDRESS source = pArgs->TransferVirtual.SourceVirtualAddress;
        pArgs->TransferVirtual.SourceVirtualAddress = source + pArgs->TransferVirtual.AllocationOffsetInBytes;
        status = RefgpuExampleBuildPagingBuffer(hAdapter, pArgs);
        pArgs->TransferVirtual.SourceVirtualAddress = source;
        return status;
    }
#elif GPUMMU_DEFECT == 4
    case DXGK_OPERATION_TRANSFER:
        return STATUS_GRAPHICS_ALLOCATION_BUSY;
#elif GPUMMU_DEFECT == 5
    case DXGK_OPERATION_TRANSFER:
        if (!pArgs->Transfer.Flags.AllocationIsIdle) {
            return STATUS_GRAPHICS_ALLOCATION_BUSY;
        }
        return RefgpuExampleBuildPagingBuffer(hAdapter, pArgs);
#elif GPUMMU_DEFECT == 6
    case DXGK_OPERATION_VIRTUAL_FILL:
        return STATUS_GRAPHICS_ALLOCATION_BUSY;
#endif
    default:
        (void)status;
        return RefgpuExampleBuildPagingBuffer(hAdapter, pArgs);
    }
}
