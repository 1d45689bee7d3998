/* A kernel-mode driver's DxgkDdiBuildPagingBuffer for the reference GPU, in C.
 *
 * It encodes every paging operation it supports into the reference GPU's command format (wddmsim/refgpu.h,
 * docs/command-format.md), following the multipass contract: it writes whole packets while they fit, records
 * its progress in MultipassOffset (pages done) and returns STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER when the next
 * packet does not fit, STATUS_SUCCESS when the operation is complete.
 *
 * Build:  cc -shared -fPIC -O2 -fms-extensions -I"$(wddmsim include-dir)" refgpu_paging.c -o librefgpu.so
 * Check:  wddmsim check-driver ./librefgpu.so
 *
 * The broken variants the conformance tests use are this file compiled with -DREFGPU_DEFECT=<n> (see the
 * REFGPU_DEFECT_* values below); each plants one defect a real driver is known to have. */
#include <string.h>

#include <d3dkmddi.h>
#include <wddmsim/adapter.h>
#include <wddmsim/refgpu.h>

#define REFGPU_DEFECT_NONE 0
#define REFGPU_DEFECT_IGNORE_TRANSFER_OFFSET 1 /* the segment side ignores TransferOffset */
#define REFGPU_DEFECT_MDL_OFFSET_IN_BYTES 2    /* MdlOffset taken as bytes instead of pages */
#define REFGPU_DEFECT_SUCCESS_FOR_ALL 3        /* UnmapApertureSegment unsupported, yet it "succeeds" */
#define REFGPU_DEFECT_WRITE_PAST_DMA_SIZE 4    /* a Fill packet written without checking the room left */
#define REFGPU_DEFECT_ILLEGAL_STATUS 5         /* STATUS_INVALID_PARAMETER returned from BuildPagingBuffer */
#define REFGPU_DEFECT_NO_PROGRESS 6            /* a Transfer's progress lost on INSUFFICIENT_DMA_BUFFER */
#define REFGPU_DEFECT_POINTER_NOT_ADVANCED 7   /* packets written, pDmaBuffer left where it was */
#define REFGPU_DEFECT_FILL_ONE_PAGE_TOO_MANY 8 /* a Fill that covers one page more than FillSize */
#define REFGPU_DEFECT_APERTURE_AT_BUILD_TIME 9 /* aperture entries written by the CPU while building */
#define REFGPU_DEFECT_FLUSH_NOTHING 10          /* FlushTlb invalidates a one-byte range, not the one asked */

#ifndef REFGPU_DEFECT
#define REFGPU_DEFECT REFGPU_DEFECT_NONE
#endif

#define PAGE_BYTES 4096ull
#define MAX_COPY_BYTES (64ull << 20) /* the largest COPY or FILL one packet carries */

#if defined(__GNUC__)
#define REFGPU_EXPORT __attribute__((visibility("default")))
#else
#define REFGPU_EXPORT
#endif

static WDDMSIM_ADAPTER_DESC g_adapter;
static WDDMSIM_SEGMENT_DESC g_segments[32];

/* --- the adapter ------------------------------------------------------------------------------------- */

REFGPU_EXPORT NTSTATUS WddmsimStartDevice(HANDLE hAdapter, const WDDMSIM_ADAPTER_DESC *pDesc)
{
    (void)hAdapter;
    if (pDesc == NULL || pDesc->Version != WDDMSIM_ADAPTER_DESC_VERSION || pDesc->SegmentCount > 32) {
        return STATUS_INVALID_PARAMETER;
    }
    g_adapter = *pDesc;
    memcpy(g_segments, pDesc->Segments, pDesc->SegmentCount * sizeof(g_segments[0]));
    g_adapter.Segments = g_segments;
    return STATUS_SUCCESS;
}

static const WDDMSIM_SEGMENT_DESC *find_segment(UINT SegmentId)
{
    for (uint32_t i = 0; i < g_adapter.SegmentCount; i++) {
        if (g_segments[i].SegmentId == SegmentId) {
            return &g_segments[i];
        }
    }
    return NULL;
}

/* --- the paging buffer ------------------------------------------------------------------------------- */

static uint64_t padded(uint64_t length)
{
    return (length + REFGPU_PACKET_ALIGNMENT - 1) & ~(uint64_t)(REFGPU_PACKET_ALIGNMENT - 1);
}

/* Room for a packet of `length` bytes (already padded)? */
static int fits(const DXGKARG_BUILDPAGINGBUFFER *pArgs, uint64_t length)
{
    return length <= pArgs->DmaSize;
}

/* Reserve `length` zeroed bytes at pDmaBuffer and advance past them (the caller checked the room). */
static uint8_t *take(DXGKARG_BUILDPAGINGBUFFER *pArgs, uint64_t length)
{
    uint8_t *at = (uint8_t *)pArgs->pDmaBuffer;
    memset(at, 0, (size_t)length);
#if REFGPU_DEFECT != REFGPU_DEFECT_POINTER_NOT_ADVANCED
    pArgs->pDmaBuffer = at + length;
    pArgs->DmaSize -= (UINT)length;
#endif
    return at;
}

static void header(void *packet, uint16_t opcode, uint16_t flags, uint64_t length)
{
    REFGPU_HEADER h;
    h.Opcode = opcode;
    h.Flags = flags;
    h.Length = (uint32_t)length;
    memcpy(packet, &h, sizeof h);
}

static uint64_t phys(uint64_t address)
{
    return REFGPU_ADDRESS(REFGPU_SPACE_GPU_PHYS, address);
}

static uint64_t copy_length(uint64_t extents)
{
    return padded(sizeof(REFGPU_COPY) + 8 * extents);
}

static uint64_t write_qwords_length(uint64_t inline_words)
{
    return padded(sizeof(REFGPU_WRITE_QWORDS) + 8 * inline_words);
}

/* --- Transfer (op 0) ------------------------------------------------------------------------------- */

/* The MDL page of transfer page `page`. */
static PFN_NUMBER mdl_page(PMDL pMdl, UINT MdlOffset, uint64_t page)
{
#if REFGPU_DEFECT == REFGPU_DEFECT_MDL_OFFSET_IN_BYTES
    return MmGetMdlPfnArray(pMdl)[MdlOffset / PAGE_BYTES + page]; /* as if MdlOffset counted bytes */
#else
    return MmGetMdlPfnArray(pMdl)[MdlOffset + page];
#endif
}

static uint64_t segment_side(const DXGKARG_BUILDPAGINGBUFFER *pArgs, LONGLONG SegmentAddress, uint64_t page)
{
#if REFGPU_DEFECT == REFGPU_DEFECT_IGNORE_TRANSFER_OFFSET
    (void)pArgs;
    return phys((uint64_t)SegmentAddress + page * PAGE_BYTES);
#else
    return phys((uint64_t)SegmentAddress + pArgs->Transfer.TransferOffset + page * PAGE_BYTES);
#endif
}

/* Extents of MDL pages [first, first + pages), at most `max_extents`; returns the pages they cover. */
static uint64_t extents(PMDL pMdl, UINT MdlOffset, uint64_t first, uint64_t pages, uint64_t *out,
                        uint64_t max_extents, uint64_t *count)
{
    uint64_t covered = 0;
    *count = 0;
    while (covered < pages && *count < max_extents) {
        PFN_NUMBER start = mdl_page(pMdl, MdlOffset, first + covered);
        uint64_t run = 1;
        while (covered + run < pages && run < REFGPU_MAX_EXTENT_PAGES &&
               mdl_page(pMdl, MdlOffset, first + covered + run) == start + run) {
            run++;
        }
        out[(*count)++] = ((uint64_t)start & REFGPU_PAGE_EXTENT_PFN_MASK) |
                          ((run - 1) << REFGPU_PAGE_EXTENT_COUNT_MINUS1_SHIFT);
        covered += run;
    }
    return covered;
}

static NTSTATUS build_transfer(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const UINT src_segment = pArgs->Transfer.Source.SegmentId;
    const UINT dst_segment = pArgs->Transfer.Destination.SegmentId;
    const uint64_t size = pArgs->Transfer.TransferSize;
    const uint64_t pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
    if (pArgs->Transfer.Flags.Swizzle || pArgs->Transfer.Flags.Unswizzle) {
        return STATUS_NOT_SUPPORTED; /* never claimed: VidMm does not ask (the adapter description says so) */
    }
    while (pArgs->MultipassOffset < pages) {
        const uint64_t done = pArgs->MultipassOffset;
        uint64_t chunk = pages - done;
        if (chunk > MAX_COPY_BYTES / PAGE_BYTES) {
            chunk = MAX_COPY_BYTES / PAGE_BYTES;
        }
        REFGPU_COPY copy;
        memset(&copy, 0, sizeof copy);
        uint64_t words[64];
        uint64_t count = 0;
        if (src_segment != 0 && dst_segment != 0) {
            if (!fits(pArgs, copy_length(0))) {
                return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
            }
            copy.Src = segment_side(pArgs, pArgs->Transfer.Source.SegmentAddress.QuadPart, done);
            copy.Dst = segment_side(pArgs, pArgs->Transfer.Destination.SegmentAddress.QuadPart, done);
        } else {
            const int from_mdl = src_segment == 0;
            PMDL pMdl = from_mdl ? pArgs->Transfer.Source.pMdl : pArgs->Transfer.Destination.pMdl;
            if (!fits(pArgs, copy_length(1))) {
#if REFGPU_DEFECT == REFGPU_DEFECT_NO_PROGRESS
                pArgs->MultipassOffset = 0;
#endif
                return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
            }
            uint64_t room = 64; /* the most extents one packet of this driver carries */
            while (copy_length(room) > pArgs->DmaSize) {
                room--; /* copy_length(1) fits: checked above */
            }
            chunk = extents(pMdl, pArgs->Transfer.MdlOffset, done, chunk, words, room, &count);
            if (from_mdl) {
                copy.Flags = 1u << REFGPU_COPY_FLAGS_SRC_PAGES_SHIFT;
                copy.Src = 0; /* a page-list side holds only the offset into its first page */
                copy.Dst = segment_side(pArgs, pArgs->Transfer.Destination.SegmentAddress.QuadPart, done);
            } else {
                copy.Flags = 1u << REFGPU_COPY_FLAGS_DST_PAGES_SHIFT;
                copy.Src = segment_side(pArgs, pArgs->Transfer.Source.SegmentAddress.QuadPart, done);
                copy.Dst = 0;
            }
        }
        uint64_t bytes = chunk * PAGE_BYTES;
        if (bytes > size - done * PAGE_BYTES) {
            bytes = size - done * PAGE_BYTES;
        }
        const uint64_t length = copy_length(count);
        copy.Size = bytes;
        copy.ExtentCount = (uint32_t)count;
        uint8_t *at = take(pArgs, length);
        header(&copy, REFGPU_OP_COPY, (uint16_t)copy.Flags, length);
        memcpy(at, &copy, sizeof copy);
        memcpy(at + sizeof copy, words, (size_t)(8 * count));
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    if (pArgs->Transfer.Flags.TransferEnd) {
        /* A SYNC after the last packet of a transfer: its writes are visible before anything after it. */
        if (!fits(pArgs, REFGPU_MIN_PACKET_LENGTH)) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        header(take(pArgs, REFGPU_MIN_PACKET_LENGTH), REFGPU_OP_SYNC, 0, REFGPU_MIN_PACKET_LENGTH);
        pArgs->MultipassOffset = (UINT)pages + 1; /* the SYNC is written: a further call must not repeat it */
    }
    return STATUS_SUCCESS;
}

/* --- Fill (op 1) ----------------------------------------------------------------------------------- */

static NTSTATUS build_fill(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const uint64_t size = pArgs->Fill.FillSize;
    uint64_t pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
#if REFGPU_DEFECT == REFGPU_DEFECT_FILL_ONE_PAGE_TOO_MANY
    pages += 1;
#endif
    while (pArgs->MultipassOffset < pages) {
        const uint64_t done = pArgs->MultipassOffset;
#if REFGPU_DEFECT != REFGPU_DEFECT_WRITE_PAST_DMA_SIZE
        if (!fits(pArgs, sizeof(REFGPU_FILL))) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
#endif
        uint64_t chunk = pages - done;
        if (chunk > MAX_COPY_BYTES / PAGE_BYTES) {
            chunk = MAX_COPY_BYTES / PAGE_BYTES;
        }
        uint64_t bytes = chunk * PAGE_BYTES;
#if REFGPU_DEFECT != REFGPU_DEFECT_FILL_ONE_PAGE_TOO_MANY
        if (bytes > size - done * PAGE_BYTES) {
            bytes = size - done * PAGE_BYTES;
        }
#endif
        REFGPU_FILL fill;
        memset(&fill, 0, sizeof fill);
        header(&fill, REFGPU_OP_FILL, 0, sizeof fill);
        fill.Dst = phys((uint64_t)pArgs->Fill.Destination.SegmentAddress.QuadPart + done * PAGE_BYTES);
        fill.Size = bytes;
        fill.Pattern = pArgs->Fill.FillPattern;
        memcpy(take(pArgs, sizeof fill), &fill, sizeof fill);
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    return STATUS_SUCCESS;
}

/* --- ReadPhysical (op 3), WritePhysical (op 4) ----------------------------------------------------- */

static uint32_t access_size(uint64_t address)
{
    return (address % 8 == 0) ? 8 : (address % 4 == 0) ? 4 : (address % 2 == 0) ? 2 : 1;
}

static NTSTATUS build_physical(DXGKARG_BUILDPAGINGBUFFER *pArgs, int write)
{
    const uint64_t address = (uint64_t)(write ? pArgs->WritePhysical.PhysicalAddress.QuadPart
                                              : pArgs->ReadPhysical.PhysicalAddress.QuadPart);
    const uint32_t size = access_size(address);
    if (write) {
        /* The data is VidMm's business only as an access: Preserve stores back what is there. */
        if (!fits(pArgs, padded(sizeof(REFGPU_WRITE_MEM)))) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        REFGPU_WRITE_MEM packet;
        memset(&packet, 0, sizeof packet);
        header(&packet, REFGPU_OP_WRITE_MEM,
               (uint16_t)(size | (1u << REFGPU_WRITE_MEM_FLAGS_PRESERVE_SHIFT)), padded(sizeof packet));
        packet.Address = phys(address);
        memcpy(take(pArgs, padded(sizeof packet)), &packet, sizeof packet);
        return STATUS_SUCCESS;
    }
    if (!fits(pArgs, sizeof(REFGPU_READ_MEM))) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    REFGPU_READ_MEM packet;
    header(&packet, REFGPU_OP_READ_MEM, (uint16_t)size, sizeof packet);
    packet.Address = phys(address);
    memcpy(take(pArgs, sizeof packet), &packet, sizeof packet);
    return STATUS_SUCCESS;
}

/* --- MapApertureSegment (op 5), UnmapApertureSegment (op 6) --------------------------------------- */

static uint64_t gart_word(const WDDMSIM_SEGMENT_DESC *segment, uint64_t page)
{
    const uint64_t first = (segment->BaseAddress - g_adapter.ApertureBase) / PAGE_BYTES;
    return phys(g_adapter.ApertureTableAddress + (first + page) * REFGPU_GART_ENTRY_SIZE);
}

static uint64_t gart_entry(uint64_t pfn, int snoop)
{
    return (1ull << REFGPU_GART_ENTRY_VALID_SHIFT) | ((uint64_t)(snoop != 0) << REFGPU_GART_ENTRY_SNOOP_SHIFT) |
           ((pfn & REFGPU_GART_ENTRY_PFN_MASK) << REFGPU_GART_ENTRY_PFN_SHIFT);
}

static NTSTATUS build_map_aperture(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(pArgs->MapApertureSegment.SegmentId);
    if (segment == NULL || !(segment->Flags & WDDMSIM_SEGMENT_APERTURE)) {
        return STATUS_INVALID_PARAMETER;
    }
    const uint64_t pages = pArgs->MapApertureSegment.NumberOfPages;
    const int snoop = pArgs->MapApertureSegment.Flags.CacheCoherent;
    PFN_NUMBER *pfns = MmGetMdlPfnArray(pArgs->MapApertureSegment.pMdl) + pArgs->MapApertureSegment.MdlOffset;
    while (pArgs->MultipassOffset < pages) {
        const uint64_t done = pArgs->MultipassOffset;
#if REFGPU_DEFECT == REFGPU_DEFECT_APERTURE_AT_BUILD_TIME
        /* The sample drivers' way: the CPU writes the table now, ahead of every copy already queued. */
        uint64_t *table = (uint64_t *)((uint8_t *)g_adapter.LocalMemory + g_adapter.ApertureTableAddress);
        const uint64_t first = (segment->BaseAddress - g_adapter.ApertureBase) / PAGE_BYTES;
        for (uint64_t i = done; i < pages; i++) {
            table[first + pArgs->MapApertureSegment.OffsetInPages + i] = gart_entry(pfns[i], snoop);
        }
        pArgs->MultipassOffset = (UINT)pages;
        break;
#else
        if (!fits(pArgs, write_qwords_length(1))) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        uint64_t n = pages - done;
        while (write_qwords_length(n) > pArgs->DmaSize) {
            n--; /* write_qwords_length(1) fits: checked above */
        }
        const uint64_t length = write_qwords_length(n);
        uint8_t *at = take(pArgs, length);
        REFGPU_WRITE_QWORDS packet;
        memset(&packet, 0, sizeof packet);
        header(&packet, REFGPU_OP_WRITE_QWORDS, 0, length);
        packet.Dst = gart_word(segment, pArgs->MapApertureSegment.OffsetInPages + done);
        packet.Count = (uint32_t)n;
        memcpy(at, &packet, sizeof packet);
        for (uint64_t i = 0; i < n; i++) {
            const uint64_t entry = gart_entry(pfns[done + i], snoop);
            memcpy(at + sizeof packet + 8 * i, &entry, 8);
        }
        pArgs->MultipassOffset = (UINT)(done + n);
#endif
    }
    return STATUS_SUCCESS;
}

static NTSTATUS build_unmap_aperture(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(pArgs->UnmapApertureSegment.SegmentId);
    if (segment == NULL || !(segment->Flags & WDDMSIM_SEGMENT_APERTURE)) {
        return STATUS_INVALID_PARAMETER;
    }
    const uint64_t pages = pArgs->UnmapApertureSegment.NumberOfPages;
    if (pArgs->MultipassOffset >= pages) {
        return STATUS_SUCCESS;
    }
    /* Every page points at the dummy page: one repeated word covers the whole range. */
    const uint64_t length = write_qwords_length(1);
    if (!fits(pArgs, length)) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    uint8_t *at = take(pArgs, length);
    REFGPU_WRITE_QWORDS packet;
    memset(&packet, 0, sizeof packet);
    header(&packet, REFGPU_OP_WRITE_QWORDS, 1u << REFGPU_WRITE_QWORDS_FLAGS_REPEAT_SHIFT, length);
    packet.Dst = gart_word(segment, pArgs->UnmapApertureSegment.OffsetInPages);
    packet.Count = (uint32_t)pages;
    memcpy(at, &packet, sizeof packet);
    const uint64_t entry = gart_entry((uint64_t)pArgs->UnmapApertureSegment.DummyPage.QuadPart / PAGE_BYTES, 0);
    memcpy(at + sizeof packet, &entry, 8);
    pArgs->MultipassOffset = (UINT)pages;
    return STATUS_SUCCESS;
}

/* --- TransferVirtual (op 8), FillVirtual (op 9): through the paging process's VA ------------------- */

/* Both VAs are paging-process addresses; AllocationOffsetInBytes says where in the allocation the bytes are and
 * is never added to them. MultipassOffset counts the 4 KiB pages done. */
static uint64_t virtual_chunk(uint64_t pages, uint64_t done)
{
    const uint64_t chunk = pages - done;
    return chunk > MAX_COPY_BYTES / PAGE_BYTES ? MAX_COPY_BYTES / PAGE_BYTES : chunk;
}

static uint64_t virtual_bytes(uint64_t size, uint64_t done, uint64_t chunk)
{
    const uint64_t left = size - done * PAGE_BYTES;
    return chunk * PAGE_BYTES < left ? chunk * PAGE_BYTES : left;
}

static NTSTATUS build_transfer_virtual(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const uint64_t size = pArgs->TransferVirtual.TransferSizeInBytes;
    const uint64_t pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
    while (pArgs->MultipassOffset < pages) {
        const uint64_t done = pArgs->MultipassOffset;
        if (!fits(pArgs, copy_length(0))) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        const uint64_t chunk = virtual_chunk(pages, done);
        REFGPU_COPY copy;
        memset(&copy, 0, sizeof copy);
        header(&copy, REFGPU_OP_COPY, 0, copy_length(0));
        copy.Src = REFGPU_ADDRESS(REFGPU_SPACE_GPU_VA, pArgs->TransferVirtual.SourceVirtualAddress + done * PAGE_BYTES);
        copy.Dst = REFGPU_ADDRESS(REFGPU_SPACE_GPU_VA,
                                  pArgs->TransferVirtual.DestinationVirtualAddress + done * PAGE_BYTES);
        copy.Size = virtual_bytes(size, done, chunk);
        memcpy(take(pArgs, copy_length(0)), &copy, sizeof copy);
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    return STATUS_SUCCESS;
}

static NTSTATUS build_fill_virtual(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const uint64_t size = pArgs->FillVirtual.FillSizeInBytes;
    const uint64_t pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
    while (pArgs->MultipassOffset < pages) {
        const uint64_t done = pArgs->MultipassOffset;
        if (!fits(pArgs, sizeof(REFGPU_FILL))) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        const uint64_t chunk = virtual_chunk(pages, done);
        REFGPU_FILL fill;
        memset(&fill, 0, sizeof fill);
        header(&fill, REFGPU_OP_FILL, 0, sizeof fill);
        fill.Dst = REFGPU_ADDRESS(REFGPU_SPACE_GPU_VA, pArgs->FillVirtual.DestinationVirtualAddress + done * PAGE_BYTES);
        fill.Size = virtual_bytes(size, done, chunk);
        fill.Pattern = pArgs->FillVirtual.FillPattern;
        memcpy(take(pArgs, sizeof fill), &fill, sizeof fill);
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    return STATUS_SUCCESS;
}

/* --- SignalMonitoredFence (op 16), FlushTlb (op 12) ----------------------------------------------- */

/* The packet address of a page table given as (SegmentId, SegmentOffset): segment 0 is system memory (a bus
 * address), any other segment a GPU physical address (its BaseAddress + the offset). */
static int table_word(D3DGPU_PHYSICAL_ADDRESS address, uint64_t *word)
{
    if (address.SegmentId == 0) {
        if (address.SegmentOffset + 8 > g_adapter.SystemMemorySize) {
            return 0;
        }
        *word = REFGPU_ADDRESS(REFGPU_SPACE_SYSTEM, address.SegmentOffset);
        return 1;
    }
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(address.SegmentId);
    if (segment == NULL || address.SegmentOffset + 8 > segment->Size) {
        return 0;
    }
    *word = phys(segment->BaseAddress + address.SegmentOffset);
    return 1;
}

/* FlushTlb: one TLB_INVALIDATE of [Start, End] under the root table; Start = End = 0 means the whole range. */
static NTSTATUS build_flush_tlb(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    uint64_t root = 0;
    if (pArgs->FlushTlb.StartVirtualAddress > pArgs->FlushTlb.EndVirtualAddress ||
        !table_word(pArgs->FlushTlb.RootPageTableAddress, &root)) {
        return STATUS_INVALID_PARAMETER;
    }
    if (!fits(pArgs, sizeof(REFGPU_TLB_INVALIDATE))) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    REFGPU_TLB_INVALIDATE packet;
    memset(&packet, 0, sizeof packet);
    header(&packet, REFGPU_OP_TLB_INVALIDATE, 0, sizeof packet);
    packet.Root = root;
    packet.Start = pArgs->FlushTlb.StartVirtualAddress;
    packet.End = pArgs->FlushTlb.EndVirtualAddress;
#if REFGPU_DEFECT == REFGPU_DEFECT_FLUSH_NOTHING
    packet.End = packet.Start = 1; /* an empty-looking one-byte range: the TLB keeps its stale entries */
#endif
    memcpy(take(pArgs, sizeof packet), &packet, sizeof packet);
    return STATUS_SUCCESS;
}

static NTSTATUS build_signal(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    if (!fits(pArgs, padded(sizeof(REFGPU_SIGNAL)))) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    REFGPU_SIGNAL packet;
    memset(&packet, 0, sizeof packet);
    header(&packet, REFGPU_OP_SIGNAL, 0, padded(sizeof packet));
    packet.Address = REFGPU_ADDRESS(REFGPU_SPACE_GPU_VA, pArgs->SignalMonitoredFence.MonitoredFenceGpuVa);
    packet.Value = pArgs->SignalMonitoredFence.MonitoredFenceValue;
    memcpy(take(pArgs, padded(sizeof packet)), &packet, sizeof packet);
    return STATUS_SUCCESS;
}

/* --- the entry point ------------------------------------------------------------------------------- */

REFGPU_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
#if REFGPU_DEFECT == REFGPU_DEFECT_ILLEGAL_STATUS
    if (pArgs->Operation == DXGK_OPERATION_FILL) {
        return STATUS_INVALID_PARAMETER;
    }
#endif
    switch (pArgs->Operation) {
    case DXGK_OPERATION_TRANSFER:
        return build_transfer(pArgs);
    case DXGK_OPERATION_FILL:
        return build_fill(pArgs);
    case DXGK_OPERATION_DISCARD_CONTENT:
        return STATUS_SUCCESS; /* nothing to do on this GPU: no compression metadata to drop */
    case DXGK_OPERATION_READ_PHYSICAL:
        return build_physical(pArgs, 0);
    case DXGK_OPERATION_WRITE_PHYSICAL:
        return build_physical(pArgs, 1);
    case DXGK_OPERATION_MAP_APERTURE_SEGMENT:
        return build_map_aperture(pArgs);
    case DXGK_OPERATION_UNMAP_APERTURE_SEGMENT:
#if REFGPU_DEFECT == REFGPU_DEFECT_SUCCESS_FOR_ALL
        (void)build_unmap_aperture; /* "not supported yet", and yet it reports success */
        return STATUS_SUCCESS;
#else
        return build_unmap_aperture(pArgs);
#endif
    case DXGK_OPERATION_SIGNAL_MONITORED_FENCE:
        return build_signal(pArgs);
    case DXGK_OPERATION_VIRTUAL_TRANSFER:
        return build_transfer_virtual(pArgs);
    case DXGK_OPERATION_VIRTUAL_FILL:
        return build_fill_virtual(pArgs);
    case DXGK_OPERATION_FLUSH_TLB:
        return build_flush_tlb(pArgs);
    default:
#if REFGPU_DEFECT == REFGPU_DEFECT_SUCCESS_FOR_ALL
        return STATUS_SUCCESS;
#else
        return STATUS_NOT_SUPPORTED;
#endif
    }
}
