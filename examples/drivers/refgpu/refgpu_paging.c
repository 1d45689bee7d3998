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
    /* Later versions only append members: this driver reads those of version 2 (the GpuMmu's shape). */
    if (pDesc == NULL || pDesc->Version < WDDMSIM_ADAPTER_DESC_VERSION || pDesc->Size < sizeof(*pDesc) ||
        pDesc->SegmentCount > 32 || pDesc->PageTableLevels > WDDMSIM_MAX_PAGE_TABLE_LEVELS) {
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

/* The GpuMmu operations exist only in the WDDM 2.x model, and only with an MMU described (version 2). */
static int gpummu(void)
{
    return g_adapter.DriverModel == 2 && g_adapter.PageTableLevels >= 2;
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

/* [va, va + size) must fit a packet's 60-bit address field: refused before any byte is written (decision 0122). */
static int packet_range(uint64_t va, uint64_t size)
{
    return va <= REFGPU_ADDRESS_ADDRESS_MASK && size <= REFGPU_ADDRESS_ADDRESS_MASK + 1 - va;
}

static NTSTATUS build_transfer_virtual(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const uint64_t size = pArgs->TransferVirtual.TransferSizeInBytes;
    const uint64_t pages = (size + PAGE_BYTES - 1) / PAGE_BYTES;
    if (!packet_range(pArgs->TransferVirtual.SourceVirtualAddress, size) ||
        !packet_range(pArgs->TransferVirtual.DestinationVirtualAddress, size)) {
        return STATUS_INVALID_PARAMETER;
    }
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
    if (!packet_range(pArgs->FillVirtual.DestinationVirtualAddress, size)) {
        return STATUS_INVALID_PARAMETER;
    }
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
 * address), any other a memory segment -- a GPU physical address, its BaseAddress + the offset.  A table never
 * lives in an aperture segment (the reference driver refuses one, and so does this one). */
static int table_word(D3DGPU_PHYSICAL_ADDRESS address, uint64_t *word)
{
    if (address.SegmentId == 0) {
        if (g_adapter.SystemMemorySize < REFGPU_PTE_SIZE ||
            address.SegmentOffset > g_adapter.SystemMemorySize - REFGPU_PTE_SIZE) {
            return 0;
        }
        *word = REFGPU_ADDRESS(REFGPU_SPACE_SYSTEM, address.SegmentOffset);
        return 1;
    }
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(address.SegmentId);
    if (segment == NULL || (segment->Flags & WDDMSIM_SEGMENT_APERTURE) || segment->Size < REFGPU_PTE_SIZE ||
        address.SegmentOffset > segment->Size - REFGPU_PTE_SIZE) {
        return 0;
    }
    *word = phys(segment->BaseAddress + address.SegmentOffset);
    return 1;
}

/* FlushTlb: one TLB_INVALIDATE of [Start, End] under the root table; Start = End = 0 means the whole range. */
static NTSTATUS build_flush_tlb(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    uint64_t root = 0;
    if (!gpummu() || pArgs->FlushTlb.StartVirtualAddress > pArgs->FlushTlb.EndVirtualAddress ||
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

/* --- UpdatePageTable (op 11), CopyPageTableEntries (op 14): the GpuMmu's page tables ---------------- */

/* As the Python reference driver builds them (kmd/paging/page_table.py, kmd/pte_format.py): each DXGK_PTE becomes
 * one hardware PTE (wddmsim/refgpu.h REFGPU_PTE_*) and the words reach the table the way UpdateMode says --
 * CPU_VIRTUAL: written now through PageTableAddress.CpuVirtual; GPU_VIRTUAL / GPU_PHYSICAL: WRITE_QWORDS packets
 * at the table's paging-process VA / (segment, offset).  MultipassOffset counts the entries done.  Every refusal
 * is STATUS_INVALID_PARAMETER, as the reference driver's, and changes nothing the caller sees (decision 0122). */

#define PAGES_PER_64K 16u

/* How an update's entries map onto the words of its table (kmd/table_geometry.py). */
typedef struct {
    uint64_t entries;         /* entries in the table, as VidMm counts them */
    uint64_t words_per_entry; /* 2 for dual level-1 entries */
    uint64_t ratio;           /* 4 KiB entries per hardware entry (> 1: leaf tables of larger GPU pages) */
    uint64_t alignment_pages; /* the alignment, in 4 KiB pages, of a valid leaf entry's page */
} TABLE_SHAPE;

static TABLE_SHAPE table_shape(UINT level, int use_64k)
{
    TABLE_SHAPE shape = {g_adapter.EntriesPerLevel[level], 1, 1, 1};
    if (use_64k) {
        shape.entries = g_adapter.Leaf64KEntries;
        shape.alignment_pages = PAGES_PER_64K;
    } else if (level == 0) {
        shape.ratio = shape.alignment_pages = g_adapter.GpuPageRatio;
    } else if (level == 1 && g_adapter.DualPte) {
        shape.words_per_entry = 2;
    }
    return shape;
}

/* What turns a DXGK_PTE into a hardware word for one update's table. */
typedef struct {
    UINT level;
    uint64_t key;             /* DriverProtection's low 8 bits in the Key field (leaf entries only) */
    int leaf64k;              /* level-1 entries of a single-PTE MMU pointing at 64 KB-page leaf tables */
    uint64_t alignment_pages;
} PTE_FORMAT;

/* DXGK_PTE.Segment -> the first 4 KiB page of that memory and the Target it is in: 0 is system memory, a memory
 * segment its BaseAddress; an aperture segment (the GPU reaches system pages directly) or no segment: refused. */
static int segment_page(UINT SegmentId, uint64_t *base_page, uint64_t *target)
{
    if (SegmentId == 0) {
        *base_page = 0;
        *target = REFGPU_TARGET_SYSTEM;
        return 1;
    }
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(SegmentId);
    if (segment == NULL || (segment->Flags & WDDMSIM_SEGMENT_APERTURE)) {
        return 0;
    }
    *base_page = segment->BaseAddress / PAGE_BYTES;
    *target = REFGPU_TARGET_LOCAL;
    return 1;
}

/* The low bits: Valid, Zero, ReadOnly, NoExecute, CacheCoherent -> Snoop.  Zero makes a valid zero page whether or
 * not Valid is set; an entry with neither is the word 0 (its other bits do not matter). */
static uint64_t low_bits(const DXGK_PTE *e)
{
    if (!e->Valid && !e->Zero) {
        return 0;
    }
    return (1ull << REFGPU_PTE_VALID_SHIFT) | ((uint64_t)e->Zero << REFGPU_PTE_ZERO_SHIFT) |
           ((uint64_t)e->ReadOnly << REFGPU_PTE_READ_ONLY_SHIFT) |
           ((uint64_t)e->NoExecute << REFGPU_PTE_NO_EXECUTE_SHIFT) |
           ((uint64_t)e->CacheCoherent << REFGPU_PTE_SNOOP_SHIFT);
}

/* One DXGK_PTE as a hardware PTE; 0 when the entry is refused (forbidden bits, a bad segment, LargePage in a leaf,
 * a misaligned page). */
static int hw_pte(const PTE_FORMAT *f, const DXGK_PTE *e, uint64_t *word)
{
    const uint64_t low = low_bits(e);
    uint64_t base_page = 0, target = 0;
    if (low == 0) {
        *word = 0;
        return 1;
    }
    if (!segment_page((UINT)e->Segment, &base_page, &target) || e->PhysicalAdapterIndex || e->SystemReserved0 ||
        e->Reserved || (f->level == 0 && e->LargePage)) {
        return 0;
    }
    /* No masking of PageAddress: an oversized one spills into the bits above, exactly as the reference driver's. */
    uint64_t w = low | (target << REFGPU_PTE_TARGET_SHIFT) | ((e->PageAddress + base_page) << REFGPU_PTE_ADDRESS_SHIFT);
    if (f->level > 0 && e->LargePage) {
        w |= 1ull << REFGPU_PTE_LARGE_PAGE_SHIFT;
    }
    if (f->level == 1 && !g_adapter.DualPte && (e->PageTablePageSize & 1)) {
        w |= 1ull << REFGPU_PTE_LEAF_64K_SHIFT; /* PageTablePageSize: ignored with dual PTEs, as documented */
    }
    w |= f->key;
    if (f->leaf64k) {
        w |= 1ull << REFGPU_PTE_LEAF_64K_SHIFT;
    }
    const uint64_t misaligned = (f->alignment_pages - 1) << REFGPU_PTE_ADDRESS_SHIFT;
    if ((w & misaligned) && !(w & (1ull << REFGPU_PTE_ZERO_SHIFT))) {
        return 0; /* a page of a 64 KB leaf table or of larger GPU pages must be aligned to it */
    }
    *word = w;
    return 1;
}

/* The entry an update uses for its entry `i`: with Flags.Repeat, always the first. */
static const DXGK_PTE *source(const DXGK_PTE *entries, const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, uint64_t i)
{
    return p->Flags.Repeat ? &entries[0] : &entries[i];
}

/* The update's argument checks, in the reference driver's order (page_table._check). */
static int update_arguments_ok(const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, TABLE_SHAPE *shape)
{
    if (!gpummu() || p->Reserved0 || p->Flags.Reserved || p->PageTableLevel >= g_adapter.PageTableLevels) {
        return 0;
    }
    *shape = table_shape(p->PageTableLevel, p->PageTableLevel == 0 && p->Flags.Use64KBPages);
    if ((uint64_t)p->StartIndex + p->NumPageTableEntries > shape->entries) {
        return 0;
    }
    const uint64_t needed = p->Flags.Repeat ? 1 : p->NumPageTableEntries;
    if (needed > 0 && p->pPageTableEntries == NULL) {
        return 0;
    }
    return p->pPageTableEntries64KB == NULL || shape->words_per_entry == 2;
}

/* One chunk of an update: entries [done, done + covered) become `count` words from table word `first`; with
 * `repeat` set, one word stands for `count`. */
typedef struct {
    uint64_t covered;
    uint64_t first;
    uint64_t count;
    int repeat;
} PTE_CHUNK;

/* The chunk at `done` that fits `room` words (page_table._Chunker.next). */
static PTE_CHUNK plan_chunk(const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, const TABLE_SHAPE *shape, uint64_t done,
                            uint64_t room)
{
    const uint64_t left = p->NumPageTableEntries - done;
    const uint64_t start = p->StartIndex + done;
    PTE_CHUNK c = {0, start, 0, 0};
    if (shape->words_per_entry == 2) {
        c.covered = left < room / 2 ? left : room / 2;
        c.first = 2 * start;
        c.count = 2 * c.covered;
    } else if (shape->ratio == 1 && p->Flags.Repeat) {
        c.covered = c.count = left; /* one repeated word covers the rest */
        c.repeat = 1;
    } else if (shape->ratio == 1) {
        c.covered = c.count = left < room ? left : room;
    } else {
        /* GPU pages larger than 4 KiB: only the entries that start a GPU page are written. */
        const uint64_t first_start = (start + shape->ratio - 1) / shape->ratio * shape->ratio;
        const uint64_t skip = first_start - start;
        c.covered = left < skip + room * shape->ratio ? left : skip + room * shape->ratio;
        c.count = c.covered > skip ? (c.covered - skip + shape->ratio - 1) / shape->ratio : 0;
        c.first = first_start / shape->ratio;
    }
    return c;
}

/* Hardware word `j` of chunk `c` at `done` (0 <= j < c.count, or j = 0 when repeated); 0 if its entry is refused. */
static int chunk_word(const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, const TABLE_SHAPE *shape,
                      const PTE_FORMAT *f, uint64_t done, const PTE_CHUNK *c, uint64_t j, uint64_t *word)
{
    if (shape->words_per_entry == 2) {
        const uint64_t i = done + j / 2;
        if (j % 2 == 0) {
            return hw_pte(f, source(p->pPageTableEntries, p, i), word);
        }
        *word = 0; /* no 64 KB array: the 64 KB-table pointer is invalid */
        return p->pPageTableEntries64KB == NULL || hw_pte(f, source(p->pPageTableEntries64KB, p, i), word);
    }
    if (shape->ratio == 1) {
        return hw_pte(f, source(p->pPageTableEntries, p, done + j), word);
    }
    const uint64_t skip = c->first * shape->ratio - (p->StartIndex + done);
    return hw_pte(f, source(p->pPageTableEntries, p, done + skip + j * shape->ratio), word);
}

/* Translate every word of chunk `c` into `out` (NULL: only check them). */
static int chunk_words(const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, const TABLE_SHAPE *shape,
                       const PTE_FORMAT *f, uint64_t done, const PTE_CHUNK *c, uint8_t *out)
{
    const uint64_t words = c->repeat ? (c->count > 0) : c->count;
    for (uint64_t j = 0; j < words; j++) {
        uint64_t word = 0;
        if (!chunk_word(p, shape, f, done, c, j, &word)) {
            return 0;
        }
        if (out != NULL) {
            memcpy(out + 8 * j, &word, 8);
        }
    }
    return 1;
}

static PTE_FORMAT pte_format(const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, const TABLE_SHAPE *shape)
{
    PTE_FORMAT f;
    f.level = p->PageTableLevel;
    f.key = f.level == 0 ? (p->DriverProtection & REFGPU_PTE_KEY_MASK) << REFGPU_PTE_KEY_SHIFT : 0;
    f.leaf64k = f.level == 1 && !g_adapter.DualPte && p->Flags.Use64KBPages;
    f.alignment_pages = shape->alignment_pages;
    return f;
}

/* CPU_VIRTUAL: every word written now, through the table's CPU address; the whole update is checked first, so a
 * refused entry leaves the table as it was. */
static NTSTATUS update_by_cpu(DXGKARG_BUILDPAGINGBUFFER *pArgs, const TABLE_SHAPE *shape, const PTE_FORMAT *f)
{
    const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p = &pArgs->UpdatePageTable;
    uint8_t *table = (uint8_t *)p->PageTableAddress.CpuVirtual;
    if (table == NULL) {
        return STATUS_INVALID_PARAMETER;
    }
    const uint64_t all = 2 * (uint64_t)p->NumPageTableEntries + 2; /* room for everything: one chunk */
    const PTE_CHUNK c = plan_chunk(p, shape, 0, all);
    if (!chunk_words(p, shape, f, 0, &c, NULL)) {
        return STATUS_INVALID_PARAMETER;
    }
    if (c.repeat) {
        for (uint64_t j = 0; j < c.count; j++) {
            chunk_words(p, shape, f, 0, &c, table + REFGPU_PTE_SIZE * (c.first + j));
        }
    } else {
        chunk_words(p, shape, f, 0, &c, table + REFGPU_PTE_SIZE * c.first);
    }
    pArgs->MultipassOffset = p->NumPageTableEntries;
    return STATUS_SUCCESS;
}

/* The most inline words one WRITE_QWORDS carries in `room` bytes. */
static uint64_t max_qwords_in(uint64_t room)
{
    const uint64_t aligned = room & ~(uint64_t)(REFGPU_PACKET_ALIGNMENT - 1);
    return aligned < sizeof(REFGPU_WRITE_QWORDS) ? 0 : (aligned - sizeof(REFGPU_WRITE_QWORDS)) / 8;
}

/* The packet address of the table's word 0 in the GPU modes; 0 if the address is refused. */
static int table_base(const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p, uint64_t *base)
{
    if (p->UpdateMode == DXGK_PAGETABLEUPDATE_GPU_VIRTUAL) {
        if (p->PageTableAddress.GpuVirtual > REFGPU_ADDRESS_ADDRESS_MASK) {
            return 0;
        }
        *base = REFGPU_ADDRESS(REFGPU_SPACE_GPU_VA, p->PageTableAddress.GpuVirtual);
        return 1;
    }
    return table_word(p->PageTableAddress.GpuPhysical, base);
}

/* GPU_VIRTUAL / GPU_PHYSICAL: WRITE_QWORDS packets while they fit.  The words are translated straight into the
 * packets; pDmaBuffer, DmaSize and MultipassOffset change only when the call returns a legal status. */
static NTSTATUS update_by_gpu(DXGKARG_BUILDPAGINGBUFFER *pArgs, const TABLE_SHAPE *shape, const PTE_FORMAT *f)
{
    const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p = &pArgs->UpdatePageTable;
    uint64_t base = 0;
    if (pArgs->pDmaBuffer == NULL || !table_base(p, &base) || pArgs->MultipassOffset > p->NumPageTableEntries) {
        return STATUS_INVALID_PARAMETER;
    }
    uint8_t *at = (uint8_t *)pArgs->pDmaBuffer;
    uint64_t room = pArgs->DmaSize;
    uint64_t done = pArgs->MultipassOffset;
    NTSTATUS status = STATUS_SUCCESS;
    while (done < p->NumPageTableEntries) {
        const uint64_t room_words = max_qwords_in(room);
        if (room_words < shape->words_per_entry) {
            status = STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
            break;
        }
        const PTE_CHUNK c = plan_chunk(p, shape, done, room_words);
        if (c.count > 0) {
            const uint64_t inline_words = c.repeat ? 1 : c.count;
            const uint64_t length = write_qwords_length(inline_words);
            memset(at, 0, (size_t)length);
            if (!chunk_words(p, shape, f, done, &c, at + sizeof(REFGPU_WRITE_QWORDS))) {
                return STATUS_INVALID_PARAMETER;
            }
            REFGPU_WRITE_QWORDS packet;
            memset(&packet, 0, sizeof packet);
            header(&packet, REFGPU_OP_WRITE_QWORDS, (uint16_t)(c.repeat ? 1u << REFGPU_WRITE_QWORDS_FLAGS_REPEAT_SHIFT : 0),
                   length);
            packet.Dst = base + REFGPU_PTE_SIZE * c.first;
            packet.Count = (uint32_t)c.count;
            memcpy(at, &packet, sizeof packet);
            at += length;
            room -= length;
        }
        done += c.covered;
    }
    pArgs->DmaSize -= (UINT)(at - (uint8_t *)pArgs->pDmaBuffer);
    pArgs->pDmaBuffer = at;
    pArgs->MultipassOffset = (UINT)done;
    return status;
}

/* UpdatePageTable: Flags.InitialUpdate and NotifyEviction change nothing in how the words are built. */
static NTSTATUS build_update_page_table(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *p = &pArgs->UpdatePageTable;
    TABLE_SHAPE shape;
    if (!update_arguments_ok(p, &shape)) {
        return STATUS_INVALID_PARAMETER;
    }
    const PTE_FORMAT f = pte_format(p, &shape);
    if (p->UpdateMode == DXGK_PAGETABLEUPDATE_CPU_VIRTUAL) {
        return update_by_cpu(pArgs, &shape, &f);
    }
    return update_by_gpu(pArgs, &shape, &f);
}

/* The GPU VA of PTE `index` of the table at `table`; 0 if it leaves the packet's 60-bit address field. */
static int pte_va(D3DGPU_VIRTUAL_ADDRESS table, UINT index, uint64_t *word)
{
    const uint64_t va = table + REFGPU_PTE_SIZE * (uint64_t)index;
    if (va < table || va > REFGPU_ADDRESS_ADDRESS_MASK) {
        return 0;
    }
    *word = REFGPU_ADDRESS(REFGPU_SPACE_GPU_VA, va);
    return 1;
}

/* CopyPageTableEntries: one COPY per range, between the two tables' paging-process VAs (64 KB aligned); every
 * range is checked before the first packet.  MultipassOffset counts the ranges done. */
static NTSTATUS build_copy_page_table_entries(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES *p = &pArgs->CopyPageTableEntries;
    uint64_t src = 0, dst = 0;
    if (!gpummu() || (p->NumRanges > 0 && p->pRanges == NULL) || pArgs->MultipassOffset > p->NumRanges) {
        return STATUS_INVALID_PARAMETER;
    }
    for (UINT i = 0; i < p->NumRanges; i++) {
        const DXGK_BUILDPAGINGBUFFER_COPY_RANGE *r = &p->pRanges[i];
        if (r->SrcPageTableAddress % (64u * 1024u) || r->DstPageTableAddress % (64u * 1024u) ||
            !pte_va(r->SrcPageTableAddress, r->SrcStartPteIndex, &src) ||
            !pte_va(r->DstPageTableAddress, r->DstStartPteIndex, &dst)) {
            return STATUS_INVALID_PARAMETER;
        }
    }
    if (pArgs->pDmaBuffer == NULL) {
        return STATUS_INVALID_PARAMETER; /* this operation writes packets, even when it has no range */
    }
    while (pArgs->MultipassOffset < p->NumRanges) {
        const DXGK_BUILDPAGINGBUFFER_COPY_RANGE *r = &p->pRanges[pArgs->MultipassOffset];
        if (!fits(pArgs, copy_length(0))) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        pte_va(r->SrcPageTableAddress, r->SrcStartPteIndex, &src);
        pte_va(r->DstPageTableAddress, r->DstStartPteIndex, &dst);
        REFGPU_COPY copy;
        memset(&copy, 0, sizeof copy);
        header(&copy, REFGPU_OP_COPY, 0, copy_length(0));
        copy.Src = src;
        copy.Dst = dst;
        copy.Size = REFGPU_PTE_SIZE * (uint64_t)r->NumPageTableEntries;
        memcpy(take(pArgs, copy_length(0)), &copy, sizeof copy);
        pArgs->MultipassOffset++;
    }
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
    case DXGK_OPERATION_UPDATE_PAGE_TABLE:
        return build_update_page_table(pArgs);
    case DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES:
        return build_copy_page_table_entries(pArgs);
    default:
#if REFGPU_DEFECT == REFGPU_DEFECT_SUCCESS_FOR_ALL
        return STATUS_SUCCESS;
#else
        return STATUS_NOT_SUPPORTED;
#endif
    }
}
