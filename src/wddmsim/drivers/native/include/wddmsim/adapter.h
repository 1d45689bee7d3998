/* wddmsim/adapter.h -- what the bridge tells a native driver about the adapter it drives.
 *
 * On Windows a driver learns its hardware in DxgkDdiStartDevice (its PCI resources) and decides its segments
 * itself.  Under wddmsim the segments VidMm manages come from the adapter description (decision 0110), so the
 * bridge hands them to the driver before the first DDI call, through the optional export
 *
 *     NTSTATUS WddmsimStartDevice(HANDLE hAdapter, const WDDMSIM_ADAPTER_DESC *pDesc);
 *
 * The description stays valid until the library is unloaded.  A driver that needs none of it exports nothing.
 *
 * A later version only appends members: a driver checks Version >= the version whose members it reads (and
 * Size >= the size it expects), never equality.  Version 2 appends the GpuMmu's shape (decision 0122). */
#ifndef WDDMSIM_ADAPTER_H
#define WDDMSIM_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#if defined(__cplusplus)
#define WDDMSIM_ADAPTER_STATIC_ASSERT(cond, tag) static_assert(cond, #tag)
extern "C" {
#else
#define WDDMSIM_ADAPTER_STATIC_ASSERT(cond, tag) _Static_assert(cond, #tag)
#endif

#define WDDMSIM_ADAPTER_DESC_VERSION 2u
#define WDDMSIM_MAX_PAGE_TABLE_LEVELS 6u

/* WDDMSIM_SEGMENT_DESC.Flags */
#define WDDMSIM_SEGMENT_APERTURE 0x1u    /* an aperture segment: its pages are mapped into the GART */
#define WDDMSIM_SEGMENT_CPU_VISIBLE 0x2u /* reachable by the CPU through the BAR */

typedef struct _WDDMSIM_SEGMENT_DESC {
    uint32_t SegmentId;   /* as VidMm numbers it (1-based: DXGK_SEGMENTDESCRIPTOR order) */
    uint32_t Flags;       /* WDDMSIM_SEGMENT_* */
    uint64_t BaseAddress; /* DXGK_SEGMENTDESCRIPTOR.BaseAddress: the GPU physical address of segment offset 0 */
    uint64_t Size;        /* bytes */
} WDDMSIM_SEGMENT_DESC;

typedef struct _WDDMSIM_ADAPTER_DESC {
    uint32_t Version;      /* WDDMSIM_ADAPTER_DESC_VERSION */
    uint32_t Size;         /* sizeof(WDDMSIM_ADAPTER_DESC) */
    uint32_t DriverModel;  /* 1: WDDM 1.x segment model; 2: WDDM 2.x GpuMmu */
    uint32_t SegmentCount;
    const WDDMSIM_SEGMENT_DESC *Segments;
    void *LocalMemory;     /* one flat CPU pointer to GPU physical [0, LocalMemorySize): a software GPU's "VRAM" */
    uint64_t LocalMemorySize;
    uint64_t ApertureBase; /* GPU physical address of aperture page 0 */
    uint64_t ApertureSize;
    uint64_t ApertureTableAddress; /* GPU physical address of the aperture table: 8-byte entry i maps page i */
    uint64_t SystemMemorySize;     /* bytes of system memory the GPU can reach (bus addresses from 0) */
    /* Version 2: the GpuMmu's shape (DriverModel 2; all zero in the segment model). */
    uint32_t PageTableLevels; /* DXGK_GPUMMUCAPS.PageTableLevelCount: 2..WDDMSIM_MAX_PAGE_TABLE_LEVELS */
    uint32_t DualPte;         /* 1: a level-1 entry is two PTEs, the 4 KB leaf table's then the 64 KB one's */
    uint32_t GpuPageRatio;    /* 4 KiB pages per GPU page of a 4 KB-kind leaf table: 1, 2, 4, 8 or 16 */
    uint32_t Leaf64KEntries;  /* entries of a 64 KB-page leaf table (one per 64 KiB) */
    uint32_t EntriesPerLevel[WDDMSIM_MAX_PAGE_TABLE_LEVELS]; /* entries of a table at each level, leaf first
                                                              * (the leaf counts 4 KiB entries, as VidMm does);
                                                              * 0 past PageTableLevels */
} WDDMSIM_ADAPTER_DESC;

WDDMSIM_ADAPTER_STATIC_ASSERT(sizeof(WDDMSIM_SEGMENT_DESC) == 24, segment_desc_size);
WDDMSIM_ADAPTER_STATIC_ASSERT(sizeof(WDDMSIM_ADAPTER_DESC) == 112, adapter_desc_size);
WDDMSIM_ADAPTER_STATIC_ASSERT(offsetof(WDDMSIM_ADAPTER_DESC, SystemMemorySize) == 64, adapter_desc_v1_prefix);
WDDMSIM_ADAPTER_STATIC_ASSERT(offsetof(WDDMSIM_ADAPTER_DESC, PageTableLevels) == 72, adapter_desc_v2_levels);
WDDMSIM_ADAPTER_STATIC_ASSERT(offsetof(WDDMSIM_ADAPTER_DESC, EntriesPerLevel) == 88, adapter_desc_v2_entries);

#if defined(__cplusplus)
}
#endif

#endif /* WDDMSIM_ADAPTER_H */
