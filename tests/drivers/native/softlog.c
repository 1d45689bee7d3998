/* A segment-model driver whose paging buffer is a software log of CPU addresses (decision 0131's case).
 *
 * DxgkDdiBuildPagingBuffer claims Transfer between a memory segment and an MDL: it maps the MDL with
 * MmGetSystemAddressForMdlSafe and records the view's address; its executor, WddmsimExecutePagingBuffer, copies
 * through that address when the buffer runs -- long after the call that mapped it returned.
 *
 * SOFTLOG_SPIN: 1 makes the executor spin until SoftlogRelease() is called, 2 makes DxgkDdiBuildPagingBuffer
 * spin so (a driver that never returns: the watchdog's case, decision 0132). */
#define _POSIX_C_SOURCE 199309L
#include <time.h>

#include <d3dkmddi.h>
#include <ntddk.h>

#ifndef SOFTLOG_SPIN
#define SOFTLOG_SPIN 0
#endif

typedef struct {
    ULONGLONG SegmentAddress;
    ULONGLONG SystemVa;
    ULONGLONG Size;
    UINT SegmentId;
    UINT ToSystem;
} SOFTLOG_RECORD;

static volatile LONG g_release;
static volatile LONG g_spinning;

WDDMSIM_EXPORT VOID SoftlogRelease(void) { g_release = 1; }
WDDMSIM_EXPORT LONG SoftlogSpinning(void) { return g_spinning; }

/* Never returns until released (a millisecond's sleep per turn: it hangs without eating a core). */
static void spin(void)
{
    const struct timespec turn = {0, 1000000};
    g_spinning = 1;
    while (!g_release)
        nanosleep(&turn, NULL);
    g_spinning = 0;
}

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(const HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_TRANSFER *t = &pArgs->Transfer;
    SOFTLOG_RECORD record;
    PMDL mdl;
    UNREFERENCED_PARAMETER(hAdapter);
    if (SOFTLOG_SPIN == 2)
        spin();
    if (pArgs->Operation != DXGK_OPERATION_TRANSFER || t->TransferOffset != 0 || t->MdlOffset != 0)
        return STATUS_INVALID_PARAMETER;
    if (pArgs->DmaSize < sizeof record)
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    record.ToSystem = t->Source.SegmentId != 0;
    record.SegmentId = record.ToSystem ? t->Source.SegmentId : t->Destination.SegmentId;
    record.SegmentAddress =
        (ULONGLONG)(record.ToSystem ? t->Source.SegmentAddress.QuadPart : t->Destination.SegmentAddress.QuadPart);
    mdl = record.ToSystem ? t->Destination.pMdl : t->Source.pMdl;
    record.SystemVa = (ULONGLONG)(ULONG_PTR)MmGetSystemAddressForMdlSafe(mdl, NormalPagePriority);
    if (record.SystemVa == 0)
        return STATUS_INVALID_PARAMETER;
    record.Size = t->TransferSize;
    RtlCopyMemory(pArgs->pDmaBuffer, &record, sizeof record);
    pArgs->pDmaBuffer = (PUCHAR)pArgs->pDmaBuffer + sizeof record;
    pArgs->DmaSize -= (UINT)sizeof record;
    return STATUS_SUCCESS;
}

WDDMSIM_EXPORT NTSTATUS WddmsimExecutePagingBuffer(const WDDMSIM_GPU_SERVICES *Services,
                                                   const WDDMSIM_PAGING_SUBMISSION *Submission)
{
    UINT offset;
    if (SOFTLOG_SPIN == 1)
        spin();
    for (offset = Submission->StartOffset; offset + sizeof(SOFTLOG_RECORD) <= Submission->EndOffset;
         offset += sizeof(SOFTLOG_RECORD)) {
        SOFTLOG_RECORD r;
        NTSTATUS status;
        RtlCopyMemory(&r, (PUCHAR)Submission->pDmaBuffer + offset, sizeof r);
        if (r.ToSystem)
            status = Services->ReadLocal(Services->Context, r.SegmentId, r.SegmentAddress, (PVOID)(ULONG_PTR)r.SystemVa,
                                         (SIZE_T)r.Size);
        else
            status = Services->WriteLocal(Services->Context, r.SegmentId, r.SegmentAddress,
                                          (PVOID)(ULONG_PTR)r.SystemVa, (SIZE_T)r.Size);
        if (!NT_SUCCESS(status))
            return status;
    }
    return STATUS_SUCCESS;
}
