/* A kernel-mode driver whose paging buffer is a software log, and the executor that replays it.
 *
 * The pattern of Microsoft's sample drivers for GPUs without a paging engine of their own: DxgkDdiBuildPagingBuffer
 * does not encode hardware commands, it copies what each DXGKARG_BUILDPAGINGBUFFER asks into the paging buffer as
 * a fixed-size record; when VidMm submits the buffer, the executor walks the submitted range [StartOffset,
 * EndOffset) record by record and carries each one out -- here through the simulator's GPU services
 * (WDDMSIM_GPU_SERVICES, decision 0103): local memory by segment address, system memory by physical address,
 * aperture pages by (SegmentId, page).
 *
 * Nothing is done while building.  A record holds values only, never a pointer: VidMm's MDL is copied as the PFNs
 * the record needs (at most SOFTLOG_MAX_PAGES per record), so the log stays valid whatever happens to the
 * arguments once DxgkDdiBuildPagingBuffer has returned.  Multipass: a record is written whole or not at all;
 * MultipassOffset counts the pages already logged; STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER when the next record
 * does not fit in DmaSize.
 *
 * Build:  cc -std=c11 -O2 -shared -fPIC -I"$(wddmsim include-dir)" -o libsoftlog.so softlog_paging.c
 * Check:  wddmsim check-driver ./libsoftlog.so --adapter softlog.toml
 * Run:    wddmsim run --driver softlog.toml      (softlog.toml names libsoftlog.so beside it)
 *
 * -DSOFTLOG_DEFECT=1 builds a broken variant: MapApertureSegment writes the aperture table while building, not
 * when the buffer executes -- the mapping overtakes every copy queued before it.  check-driver names it. */
#include <string.h>

#include <d3dkmddi.h>
#include <wddmsim/adapter.h>

#define SOFTLOG_DEFECT_NONE 0
#define SOFTLOG_DEFECT_MAP_AT_BUILD_TIME 1 /* MapApertureSegment applied by the CPU while building */

#ifndef SOFTLOG_DEFECT
#define SOFTLOG_DEFECT SOFTLOG_DEFECT_NONE
#endif

#if defined(__GNUC__)
#define SOFTLOG_EXPORT __attribute__((visibility("default")))
#else
#define SOFTLOG_EXPORT
#endif

#define PAGE_BYTES 4096ull
#define SOFTLOG_MAGIC 0x474F4C53u               /* "SLOG" */
#define SOFTLOG_MAX_PAGES 25u                   /* PFNs one record carries */
#define SOFTLOG_MAX_SPAN (64ull << 20)          /* bytes one memory-to-memory or Fill record covers */
#define SOFTLOG_BOUNCE_BYTES (64u * 1024u)      /* the executor's staging buffer */
#define GART_VALID 0x1ull                       /* the reference GPU's aperture entry: Valid, PFN at bit 12 */
#define GART_SNOOP 0x2ull
#define GART_PFN_SHIFT 12
#define GART_PFN_MASK ((1ull << 40) - 1)

/* One operation, or one piece of one.  Every field is a value: the log means the same at execution time. */
typedef struct _SOFTLOG_RECORD {
    UINT32 Magic;                /* SOFTLOG_MAGIC */
    UINT32 Operation;            /* DXGK_BUILDPAGINGBUFFER_OPERATION */
    UINT32 SourceSegmentId;      /* 0: the source is the system pages in Pfns */
    UINT32 DestinationSegmentId; /* 0: the destination is the system pages in Pfns */
    UINT64 Source;               /* segment address of the first source byte */
    UINT64 Destination;          /* segment address / physical address / first aperture page */
    UINT64 Size;                 /* bytes (Transfer, Fill, Read/WritePhysical), pages (Unmap) */
    UINT64 Argument;             /* FillPattern, MapApertureFlags.Value, the dummy page's PFN */
    UINT32 PageCount;            /* entries of Pfns in use */
    UINT32 Reserved;
    PFN_NUMBER Pfns[SOFTLOG_MAX_PAGES];
} SOFTLOG_RECORD;

_Static_assert(sizeof(SOFTLOG_RECORD) == 256, "a record is 256 bytes");
#define SOFTLOG_RECORD_BYTES ((UINT)sizeof(SOFTLOG_RECORD))

static WDDMSIM_ADAPTER_DESC g_adapter;
static WDDMSIM_SEGMENT_DESC g_segments[32];
static UCHAR g_bounce[SOFTLOG_BOUNCE_BYTES];

/* --- DxgkDdiStartDevice's part: the segments ------------------------------------------------------------- */

SOFTLOG_EXPORT NTSTATUS WddmsimStartDevice(HANDLE hAdapter, const WDDMSIM_ADAPTER_DESC *pDesc)
{
    (void)hAdapter;
    /* Later versions only append members: this driver reads those of version 1 (segments, aperture, memory). */
    if (pDesc == NULL || pDesc->Version < 1 || pDesc->Size < offsetof(WDDMSIM_ADAPTER_DESC, SystemMemorySize) + 8 ||
        pDesc->SegmentCount > 32) {
        return STATUS_INVALID_PARAMETER;
    }
    RtlZeroMemory(&g_adapter, sizeof(g_adapter));
    RtlCopyMemory(&g_adapter, pDesc, pDesc->Size < sizeof(g_adapter) ? pDesc->Size : sizeof(g_adapter));
    memcpy(g_segments, pDesc->Segments, pDesc->SegmentCount * sizeof(g_segments[0]));
    g_adapter.Segments = g_segments;
    return STATUS_SUCCESS;
}

static const WDDMSIM_SEGMENT_DESC *find_segment(UINT SegmentId)
{
    for (UINT i = 0; i < g_adapter.SegmentCount; i++) {
        if (g_segments[i].SegmentId == SegmentId) {
            return &g_segments[i];
        }
    }
    return NULL;
}

static BOOLEAN is_aperture(UINT SegmentId)
{
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(SegmentId);
    return segment != NULL && (segment->Flags & WDDMSIM_SEGMENT_APERTURE) != 0;
}

/* ========================================================================================================== *
 * DxgkDdiBuildPagingBuffer: the log
 * ========================================================================================================== */

/* A fresh record at pDmaBuffer, or NULL when DmaSize cannot hold one (nothing is written then). */
static SOFTLOG_RECORD *begin_record(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    if (pArgs->DmaSize < SOFTLOG_RECORD_BYTES) {
        return NULL;
    }
    SOFTLOG_RECORD *record = (SOFTLOG_RECORD *)pArgs->pDmaBuffer;
    RtlZeroMemory(record, sizeof(*record));
    record->Magic = SOFTLOG_MAGIC;
    record->Operation = (UINT32)pArgs->Operation;
    return record;
}

/* The record is complete: advance past it, as dxgkrnl expects of pDmaBuffer and DmaSize. */
static void end_record(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    pArgs->pDmaBuffer = (UCHAR *)pArgs->pDmaBuffer + SOFTLOG_RECORD_BYTES;
    pArgs->DmaSize -= SOFTLOG_RECORD_BYTES;
}

static UINT64 page_count(UINT64 bytes)
{
    return (bytes + PAGE_BYTES - 1) / PAGE_BYTES;
}

static UINT64 min_u64(UINT64 a, UINT64 b)
{
    return a < b ? a : b;
}

/* --- Transfer (op 0): TransferOffset applies to the segment side, MdlOffset (pages) to the MDL side ------- */

static NTSTATUS log_transfer(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_TRANSFER *transfer = &pArgs->Transfer;
    const UINT64 pages = page_count(transfer->TransferSize);
    const BOOLEAN from_mdl = transfer->Source.SegmentId == 0;
    const BOOLEAN to_mdl = transfer->Destination.SegmentId == 0;
    if (transfer->Flags.Swizzle || transfer->Flags.Unswizzle) {
        return STATUS_NOT_SUPPORTED; /* never claimed (softlog.toml: swizzling = false): VidMm does not ask */
    }
    while (pArgs->MultipassOffset < pages) {
        const UINT64 done = pArgs->MultipassOffset;
        const UINT64 step = (from_mdl || to_mdl) ? SOFTLOG_MAX_PAGES : SOFTLOG_MAX_SPAN / PAGE_BYTES;
        const UINT64 chunk = min_u64(pages - done, step);
        SOFTLOG_RECORD *record = begin_record(pArgs);
        if (record == NULL) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        record->SourceSegmentId = transfer->Source.SegmentId;
        record->DestinationSegmentId = transfer->Destination.SegmentId;
        record->Size = min_u64(chunk * PAGE_BYTES, transfer->TransferSize - done * PAGE_BYTES);
        if (!from_mdl) {
            record->Source = (UINT64)transfer->Source.SegmentAddress.QuadPart + transfer->TransferOffset +
                             done * PAGE_BYTES;
        }
        if (!to_mdl) {
            record->Destination = (UINT64)transfer->Destination.SegmentAddress.QuadPart +
                                  transfer->TransferOffset + done * PAGE_BYTES;
        }
        if (from_mdl || to_mdl) {
            const PFN_NUMBER *pfns = MmGetMdlPfnArray(from_mdl ? transfer->Source.pMdl : transfer->Destination.pMdl);
            record->PageCount = (UINT32)chunk;
            RtlCopyMemory(record->Pfns, pfns + transfer->MdlOffset + done, (SIZE_T)chunk * sizeof(PFN_NUMBER));
        }
        end_record(pArgs);
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    return STATUS_SUCCESS;
}

/* --- Fill (op 1) -------------------------------------------------------------------------------------------- */

static NTSTATUS log_fill(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const UINT64 size = pArgs->Fill.FillSize;
    const UINT64 pages = page_count(size);
    while (pArgs->MultipassOffset < pages) {
        const UINT64 done = pArgs->MultipassOffset;
        const UINT64 chunk = min_u64(pages - done, SOFTLOG_MAX_SPAN / PAGE_BYTES);
        SOFTLOG_RECORD *record = begin_record(pArgs);
        if (record == NULL) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        record->DestinationSegmentId = pArgs->Fill.Destination.SegmentId;
        record->Destination = (UINT64)pArgs->Fill.Destination.SegmentAddress.QuadPart + done * PAGE_BYTES;
        record->Size = min_u64(chunk * PAGE_BYTES, size - done * PAGE_BYTES);
        record->Argument = pArgs->Fill.FillPattern;
        end_record(pArgs);
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    return STATUS_SUCCESS;
}

/* --- one record: DiscardContent (op 2), ReadPhysical (op 3), WritePhysical (op 4) -------------------------- */

static UINT64 access_size(UINT64 address)
{
    return (address % 8 == 0) ? 8 : (address % 4 == 0) ? 4 : (address % 2 == 0) ? 2 : 1;
}

static NTSTATUS log_single(DXGKARG_BUILDPAGINGBUFFER *pArgs, UINT SegmentId, UINT64 Address, UINT64 Size)
{
    if (pArgs->MultipassOffset != 0) {
        return STATUS_SUCCESS; /* logged by an earlier call */
    }
    SOFTLOG_RECORD *record = begin_record(pArgs);
    if (record == NULL) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    record->DestinationSegmentId = SegmentId;
    record->Destination = Address;
    record->Size = Size;
    end_record(pArgs);
    pArgs->MultipassOffset = 1;
    return STATUS_SUCCESS;
}

/* --- MapApertureSegment (op 5), UnmapApertureSegment (op 6) --------------------------------------------- */

#if SOFTLOG_DEFECT == SOFTLOG_DEFECT_MAP_AT_BUILD_TIME
/* The defect: the CPU writes the aperture table now, ahead of everything queued before this buffer. */
static void map_now(const DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *map)
{
    const WDDMSIM_SEGMENT_DESC *segment = find_segment(map->SegmentId);
    UINT64 *table = (UINT64 *)((UCHAR *)g_adapter.LocalMemory + g_adapter.ApertureTableAddress);
    const UINT64 first = (segment->BaseAddress - g_adapter.ApertureBase) / PAGE_BYTES + map->OffsetInPages;
    const PFN_NUMBER *pfns = MmGetMdlPfnArray(map->pMdl) + map->MdlOffset;
    for (UINT64 i = 0; i < map->NumberOfPages; i++) {
        table[first + i] = GART_VALID | (map->Flags.CacheCoherent ? GART_SNOOP : 0) |
                           (((UINT64)pfns[i] & GART_PFN_MASK) << GART_PFN_SHIFT);
    }
}
#endif

static NTSTATUS log_map_aperture(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *map = &pArgs->MapApertureSegment;
    if (!is_aperture(map->SegmentId)) {
        return STATUS_INVALID_PARAMETER; /* VidMm maps aperture segments only */
    }
#if SOFTLOG_DEFECT == SOFTLOG_DEFECT_MAP_AT_BUILD_TIME
    if (pArgs->MultipassOffset == 0) {
        map_now(map);
    }
    return log_single(pArgs, map->SegmentId, map->OffsetInPages, 0); /* an empty record: nothing left to do */
#else
    const UINT64 pages = map->NumberOfPages;
    const PFN_NUMBER *pfns = MmGetMdlPfnArray(map->pMdl) + map->MdlOffset;
    while (pArgs->MultipassOffset < pages) {
        const UINT64 done = pArgs->MultipassOffset;
        const UINT64 chunk = min_u64(pages - done, SOFTLOG_MAX_PAGES);
        SOFTLOG_RECORD *record = begin_record(pArgs);
        if (record == NULL) {
            return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
        }
        record->DestinationSegmentId = map->SegmentId;
        record->Destination = map->OffsetInPages + done;
        record->Argument = map->Flags.Value;
        record->PageCount = (UINT32)chunk;
        RtlCopyMemory(record->Pfns, pfns + done, (SIZE_T)chunk * sizeof(PFN_NUMBER));
        end_record(pArgs);
        pArgs->MultipassOffset = (UINT)(done + chunk);
    }
    return STATUS_SUCCESS;
#endif
}

static NTSTATUS log_unmap_aperture(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *unmap = &pArgs->UnmapApertureSegment;
    if (!is_aperture(unmap->SegmentId)) {
        return STATUS_INVALID_PARAMETER;
    }
    if (pArgs->MultipassOffset != 0 || unmap->NumberOfPages == 0) {
        return STATUS_SUCCESS;
    }
    /* One record for the whole range: every page points at the dummy page. */
    SOFTLOG_RECORD *record = begin_record(pArgs);
    if (record == NULL) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    record->DestinationSegmentId = unmap->SegmentId;
    record->Destination = unmap->OffsetInPages;
    record->Size = unmap->NumberOfPages;
    record->Argument = (UINT64)unmap->DummyPage.QuadPart / PAGE_BYTES;
    end_record(pArgs);
    pArgs->MultipassOffset = 1;
    return STATUS_SUCCESS;
}

/* --- InitContextResource (op 10): the reference GPU's context image --------------------------------------- */

/* The context image of this GPU: a 64-byte header (magic, the image's GPU VA, its size, the allocation handle),
 * the rest zeroes.  Its size is the driver's own constant, the one DxgkDdiCreateContext asks VidMm to allocate
 * (DXGKARGCB_CREATECONTEXTALLOCATION.Size; the base package's CreateContext uses the same 16 KiB). */
#define SOFTLOG_CONTEXT_IMAGE_BYTES (16ull * 1024)
#define SOFTLOG_CONTEXT_MAGIC 0x31474D4958544357ull /* "WCTXIMG1" */

static NTSTATUS log_init_context(DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    const DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE *init = &pArgs->InitContextResource;
    const UINT64 pages = page_count(SOFTLOG_CONTEXT_IMAGE_BYTES);
    if (pArgs->MultipassOffset != 0) {
        return STATUS_SUCCESS;
    }
    SOFTLOG_RECORD *record = begin_record(pArgs);
    if (record == NULL) {
        return STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER;
    }
    record->DestinationSegmentId = init->Destination.SegmentId;
    record->Source = (UINT64)(ULONG_PTR)init->hAllocation; /* a value the header records, never dereferenced */
    record->Size = SOFTLOG_CONTEXT_IMAGE_BYTES;
    record->Argument = init->Destination.GpuVirtualAddress;
    if (init->Destination.SegmentId != 0) {
        record->Destination = (UINT64)init->Destination.SegmentAddress.QuadPart;
    } else {
        record->PageCount = (UINT32)pages;
        RtlCopyMemory(record->Pfns, MmGetMdlPfnArray(init->Destination.pMdl), (SIZE_T)pages * sizeof(PFN_NUMBER));
    }
    end_record(pArgs);
    pArgs->MultipassOffset = 1;
    return STATUS_SUCCESS;
}

SOFTLOG_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
    switch (pArgs->Operation) {
    case DXGK_OPERATION_TRANSFER:
        return log_transfer(pArgs);
    case DXGK_OPERATION_FILL:
        return log_fill(pArgs);
    case DXGK_OPERATION_DISCARD_CONTENT:
        return log_single(pArgs, pArgs->DiscardContent.SegmentId,
                          (UINT64)pArgs->DiscardContent.SegmentAddress.QuadPart, 0);
    case DXGK_OPERATION_READ_PHYSICAL: {
        const UINT64 address = (UINT64)pArgs->ReadPhysical.PhysicalAddress.QuadPart;
        return log_single(pArgs, pArgs->ReadPhysical.SegmentId, address, access_size(address));
    }
    case DXGK_OPERATION_WRITE_PHYSICAL: {
        const UINT64 address = (UINT64)pArgs->WritePhysical.PhysicalAddress.QuadPart;
        return log_single(pArgs, pArgs->WritePhysical.SegmentId, address, access_size(address));
    }
    case DXGK_OPERATION_MAP_APERTURE_SEGMENT:
        return log_map_aperture(pArgs);
    case DXGK_OPERATION_UNMAP_APERTURE_SEGMENT:
        return log_unmap_aperture(pArgs);
    case DXGK_OPERATION_INIT_CONTEXT_RESOURCE:
        return log_init_context(pArgs);
    default:
        return STATUS_NOT_SUPPORTED; /* not claimed by softlog.toml: VidMm does not ask */
    }
}

/* ========================================================================================================== *
 * WddmsimExecutePagingBuffer: the replay
 * ========================================================================================================== */

typedef struct _SOFTLOG_EXECUTOR {
    const WDDMSIM_GPU_SERVICES *Services;
    UINT Record; /* the record being carried out, for the log */
} SOFTLOG_EXECUTOR;

static NTSTATUS fail(SOFTLOG_EXECUTOR *exec, NTSTATUS status, const char *why)
{
    const WDDMSIM_GPU_SERVICES *s = exec->Services;
    if (s->Log != NULL) {
        char line[160];
        const char *prefix = "softlog: record ";
        SIZE_T n = 0;
        for (; prefix[n] != '\0'; n++) {
            line[n] = prefix[n];
        }
        UINT value = exec->Record;
        char digits[12];
        int d = 0;
        do {
            digits[d++] = (char)('0' + value % 10);
            value /= 10;
        } while (value != 0);
        while (d > 0) {
            line[n++] = digits[--d];
        }
        line[n++] = ':';
        line[n++] = ' ';
        for (SIZE_T i = 0; why[i] != '\0' && n < sizeof(line) - 1; i++) {
            line[n++] = why[i];
        }
        line[n] = '\0';
        s->Log(s->Context, 0, line);
    }
    return status;
}

/* The system physical address behind aperture segment address `address`, read from the GART the way the
 * reference GPU reads it on every aperture access (no aperture TLB: the entry as it is now). */
static NTSTATUS through_gart(SOFTLOG_EXECUTOR *exec, UINT64 address, UINT64 *physical)
{
    const WDDMSIM_GPU_SERVICES *s = exec->Services;
    const UINT64 page = (address - g_adapter.ApertureBase) / PAGE_BYTES;
    const UINT64 entry_at = g_adapter.ApertureTableAddress + page * 8;
    if (address < g_adapter.ApertureBase || s->LocalMemoryBase == NULL || entry_at + 8 > s->LocalMemorySize) {
        return fail(exec, STATUS_INVALID_PARAMETER, "an aperture address outside the aperture");
    }
    UINT64 entry;
    RtlCopyMemory(&entry, (const UCHAR *)s->LocalMemoryBase + entry_at, sizeof(entry));
    if (!(entry & GART_VALID)) {
        return fail(exec, STATUS_INVALID_PARAMETER, "an aperture page that is not mapped");
    }
    *physical = ((entry >> GART_PFN_SHIFT) & GART_PFN_MASK) * PAGE_BYTES + address % PAGE_BYTES;
    return STATUS_SUCCESS;
}

/* `length` bytes at `address` of segment `SegmentId` (memory or aperture) into or out of `buffer`. */
static NTSTATUS segment_io(SOFTLOG_EXECUTOR *exec, UINT SegmentId, UINT64 address, UCHAR *buffer, UINT64 length,
                          BOOLEAN write)
{
    const WDDMSIM_GPU_SERVICES *s = exec->Services;
    if (!is_aperture(SegmentId)) {
        return write ? s->WriteLocal(s->Context, SegmentId, address, buffer, (SIZE_T)length)
                     : s->ReadLocal(s->Context, SegmentId, address, buffer, (SIZE_T)length);
    }
    while (length > 0) { /* page by page: each aperture page is its own system page */
        const UINT64 piece = min_u64(length, PAGE_BYTES - address % PAGE_BYTES);
        UINT64 physical = 0;
        NTSTATUS status = through_gart(exec, address, &physical);
        if (NT_SUCCESS(status)) {
            status = write ? s->WriteSystem(s->Context, physical, buffer, (SIZE_T)piece)
                           : s->ReadSystem(s->Context, physical, buffer, (SIZE_T)piece);
        }
        if (!NT_SUCCESS(status)) {
            return status;
        }
        address += piece;
        buffer += piece;
        length -= piece;
    }
    return STATUS_SUCCESS;
}

/* A transfer's source or destination side: a segment, or the record's PFNs (byte `offset` of the run). */
static NTSTATUS side_io(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record, BOOLEAN destination, UINT64 offset,
                        UCHAR *buffer, UINT64 length)
{
    const WDDMSIM_GPU_SERVICES *s = exec->Services;
    const UINT SegmentId = destination ? record->DestinationSegmentId : record->SourceSegmentId;
    if (SegmentId != 0) {
        const UINT64 base = destination ? record->Destination : record->Source;
        return segment_io(exec, SegmentId, base + offset, buffer, length, destination);
    }
    while (length > 0) {
        const UINT64 page = offset / PAGE_BYTES;
        const UINT64 piece = min_u64(length, PAGE_BYTES - offset % PAGE_BYTES);
        if (page >= record->PageCount) {
            return fail(exec, STATUS_INVALID_PARAMETER, "a transfer longer than its pages");
        }
        const UINT64 physical = (UINT64)record->Pfns[page] * PAGE_BYTES + offset % PAGE_BYTES;
        const NTSTATUS status = destination ? s->WriteSystem(s->Context, physical, buffer, (SIZE_T)piece)
                                            : s->ReadSystem(s->Context, physical, buffer, (SIZE_T)piece);
        if (!NT_SUCCESS(status)) {
            return status;
        }
        offset += piece;
        buffer += piece;
        length -= piece;
    }
    return STATUS_SUCCESS;
}

static NTSTATUS replay_transfer(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record)
{
    /* A move within one segment towards higher addresses over itself goes back to front, as memmove does. */
    const BOOLEAN backwards = record->SourceSegmentId != 0 &&
                              record->SourceSegmentId == record->DestinationSegmentId &&
                              record->Destination > record->Source && record->Destination < record->Source + record->Size;
    const UINT64 chunks = (record->Size + SOFTLOG_BOUNCE_BYTES - 1) / SOFTLOG_BOUNCE_BYTES;
    for (UINT64 i = 0; i < chunks; i++) {
        const UINT64 chunk = backwards ? chunks - 1 - i : i;
        const UINT64 offset = chunk * SOFTLOG_BOUNCE_BYTES;
        const UINT64 length = min_u64(SOFTLOG_BOUNCE_BYTES, record->Size - offset);
        NTSTATUS status = side_io(exec, record, FALSE, offset, g_bounce, length);
        if (NT_SUCCESS(status)) {
            status = side_io(exec, record, TRUE, offset, g_bounce, length);
        }
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    return STATUS_SUCCESS;
}

static NTSTATUS replay_fill(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record)
{
    const UINT32 pattern = (UINT32)record->Argument;
    for (UINT i = 0; i < SOFTLOG_BOUNCE_BYTES; i += 4) { /* little-endian, phase from the first byte */
        RtlCopyMemory(g_bounce + i, &pattern, 4);
    }
    for (UINT64 offset = 0; offset < record->Size; offset += SOFTLOG_BOUNCE_BYTES) {
        const UINT64 length = min_u64(SOFTLOG_BOUNCE_BYTES, record->Size - offset);
        const NTSTATUS status =
            segment_io(exec, record->DestinationSegmentId, record->Destination + offset, g_bounce, length, TRUE);
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    return STATUS_SUCCESS;
}

/* ReadPhysical: one access whose value nobody keeps; WritePhysical: the bytes there stored back (the access is
 * what VidMm asks for, as the reference GPU's WRITE_MEM with Preserve). */
static NTSTATUS replay_physical(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record, BOOLEAN write)
{
    UCHAR value[8];
    NTSTATUS status =
        segment_io(exec, record->DestinationSegmentId, record->Destination, value, record->Size, FALSE);
    if (NT_SUCCESS(status) && write) {
        status = segment_io(exec, record->DestinationSegmentId, record->Destination, value, record->Size, TRUE);
    }
    return status;
}

static NTSTATUS replay_map(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record)
{
    const WDDMSIM_GPU_SERVICES *s = exec->Services;
    if (record->PageCount > SOFTLOG_MAX_PAGES) {
        return fail(exec, STATUS_INVALID_PARAMETER, "more pages than a record holds");
    }
    for (UINT i = 0; i < record->PageCount; i++) {
        const NTSTATUS status = s->SetAperturePage(s->Context, record->DestinationSegmentId,
                                                   record->Destination + i, record->Pfns[i], (UINT)record->Argument);
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    return STATUS_SUCCESS;
}

static NTSTATUS replay_unmap(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record)
{
    const WDDMSIM_GPU_SERVICES *s = exec->Services;
    for (UINT64 i = 0; i < record->Size; i++) {
        const NTSTATUS status = s->SetAperturePage(s->Context, record->DestinationSegmentId,
                                                   record->Destination + i, (PFN_NUMBER)record->Argument, 0);
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    return STATUS_SUCCESS;
}

/* The image zeroed, then its header: written where the record says, a segment or the image's system pages. */
static NTSTATUS replay_init_context(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record)
{
    const UINT64 header[4] = {SOFTLOG_CONTEXT_MAGIC, record->Argument, record->Size, record->Source};
    RtlZeroMemory(g_bounce, SOFTLOG_BOUNCE_BYTES);
    for (UINT64 offset = 0; offset < record->Size; offset += SOFTLOG_BOUNCE_BYTES) {
        const UINT64 length = min_u64(SOFTLOG_BOUNCE_BYTES, record->Size - offset);
        const NTSTATUS status = side_io(exec, record, TRUE, offset, g_bounce, length);
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    RtlCopyMemory(g_bounce, header, sizeof(header));
    return side_io(exec, record, TRUE, 0, g_bounce, sizeof(header));
}

static NTSTATUS replay(SOFTLOG_EXECUTOR *exec, const SOFTLOG_RECORD *record)
{
    if (record->Magic != SOFTLOG_MAGIC) {
        return fail(exec, STATUS_INVALID_PARAMETER, "not a softlog record (bad magic)");
    }
    switch (record->Operation) {
    case DXGK_OPERATION_TRANSFER:
        return replay_transfer(exec, record);
    case DXGK_OPERATION_FILL:
        return replay_fill(exec, record);
    case DXGK_OPERATION_DISCARD_CONTENT:
        return STATUS_SUCCESS; /* this GPU keeps no compression metadata: nothing to drop */
    case DXGK_OPERATION_READ_PHYSICAL:
        return replay_physical(exec, record, FALSE);
    case DXGK_OPERATION_WRITE_PHYSICAL:
        return replay_physical(exec, record, TRUE);
    case DXGK_OPERATION_MAP_APERTURE_SEGMENT:
        return replay_map(exec, record);
    case DXGK_OPERATION_UNMAP_APERTURE_SEGMENT:
        return replay_unmap(exec, record);
    case DXGK_OPERATION_INIT_CONTEXT_RESOURCE:
        return replay_init_context(exec, record);
    default:
        return fail(exec, STATUS_INVALID_PARAMETER, "an operation this log never holds");
    }
}

SOFTLOG_EXPORT NTSTATUS WddmsimExecutePagingBuffer(const WDDMSIM_GPU_SERVICES *pServices,
                                                   const WDDMSIM_PAGING_SUBMISSION *pSubmission)
{
    if (pServices == NULL || pSubmission == NULL || pServices->Size < sizeof(WDDMSIM_GPU_SERVICES) ||
        pSubmission->Version != WDDMSIM_PAGING_SUBMISSION_VERSION) {
        return STATUS_INVALID_PARAMETER;
    }
    SOFTLOG_EXECUTOR exec = {pServices, 0};
    const UINT start = pSubmission->StartOffset;
    const UINT end = pSubmission->EndOffset;
    if (end < start || end > pSubmission->DmaBufferSize || (end - start) % SOFTLOG_RECORD_BYTES != 0) {
        return fail(&exec, STATUS_INVALID_PARAMETER, "the submitted range is not whole records");
    }
    const UCHAR *log = (const UCHAR *)pSubmission->pDmaBuffer;
    for (UINT offset = start; offset < end; offset += SOFTLOG_RECORD_BYTES) {
        SOFTLOG_RECORD record; /* copied: the buffer holds no alignment promise */
        RtlCopyMemory(&record, log + offset, sizeof(record));
        exec.Record = (offset - start) / SOFTLOG_RECORD_BYTES;
        const NTSTATUS status = replay(&exec, &record);
        if (!NT_SUCCESS(status)) {
            return status;
        }
    }
    return STATUS_SUCCESS;
}
