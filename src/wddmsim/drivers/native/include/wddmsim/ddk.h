/*
 * wddmsim/ddk.h -- the kernel-mode DDI a DxgkDdiBuildPagingBuffer implementation needs, for building a Windows
 * display driver's paging code on Linux as a native shared library that wddmsim loads (issue 21).
 *
 * Written for wddmsim from the documents (d3dkmddi.h's DXGKARG_BUILDPAGINGBUFFER and its operation structs, the
 * WDM MDL, DXGK_PTE, ntstatus.h), not copied from any Microsoft header.  The layout is the x64 Windows one (LLP64:
 * ULONG/UINT/LONG are 32-bit; pointers, HANDLE, SIZE_T, ULONG_PTR, PHYSICAL_ADDRESS, D3DGPU_VIRTUAL_ADDRESS are
 * 64-bit); every structure's size and every member's offset is checked by _Static_assert at the end of this file
 * and, against the ctypes mirror (wddmsim.drivers.native.abi), by tests/drivers/native/test_abi_layout.py.
 *
 * Compiles cleanly as C (gcc/clang -std=c11 -Wall -Wextra -Werror -pedantic) and as C++ (g++/clang++ -std=c++17
 * -Wall -Wextra -Werror -pedantic).  The WDK's anonymous structs inside unions are marked __extension__, so
 * -fms-extensions is not needed by this header (driver code written for MSVC may still want it, and
 * -fshort-wchar for 16-bit WCHAR literals).  Decisions 0100-0104 record what the documents leave open.
 *
 * Kernel services (MmMapLockedPagesSpecifyCache, DbgPrint, KeBugCheckEx ...) go through the table that the bridge
 * stores in WddmsimKernelServices after loading the library; the pointer is a weak definition here, so the library
 * links without any wddmsim object file.
 */
#ifndef WDDMSIM_DDK_H
#define WDDMSIM_DDK_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if !(defined(__LP64__) || defined(_WIN64)) || !(defined(__x86_64__) || defined(__aarch64__) || defined(_M_X64))
#error "wddmsim/ddk.h models the x64 Windows layout: build for a 64-bit little-endian target"
#endif

#ifdef __cplusplus
#define WDDMSIM_EXTERN_C_BEGIN extern "C" {
#define WDDMSIM_EXTERN_C_END }
#define WDDMSIM_STATIC_ASSERT(expr, msg) static_assert(expr, msg)
#else
#define WDDMSIM_EXTERN_C_BEGIN
#define WDDMSIM_EXTERN_C_END
#define WDDMSIM_STATIC_ASSERT(expr, msg) _Static_assert(expr, msg)
#endif

/* Anonymous structs in unions (and 64-bit bit-fields) are the WDK's idiom; __extension__ keeps -pedantic quiet. */
#if defined(__GNUC__)
#define WDDMSIM_EXT __extension__
#define WDDMSIM_EXPORT __attribute__((visibility("default")))
#define WDDMSIM_WEAK __attribute__((weak))
#define WDDMSIM_NORETURN __attribute__((noreturn))
#define WDDMSIM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WDDMSIM_EXT
#define WDDMSIM_EXPORT
#define WDDMSIM_WEAK
#define WDDMSIM_NORETURN
#define WDDMSIM_PRINTF(f, a)
#endif

WDDMSIM_EXTERN_C_BEGIN

/* ---------------------------------------------------------------------------------------------------------------
 * Annotations and calling conventions: all empty on x64.
 */
#define _In_
#define _In_opt_
#define _Out_
#define _Out_opt_
#define _Inout_
#define _Inout_opt_
#define _In_reads_(n)
#define _In_reads_bytes_(n)
#define _Out_writes_(n)
#define _Out_writes_bytes_(n)
#define _Inout_updates_bytes_(n)
#define _Must_inspect_result_
#define _Check_return_
#define _Success_(e)
#define _IRQL_requires_(l)
#define _IRQL_requires_max_(l)
#define _Function_class_(c)
#define _Use_decl_annotations_
#define _Analysis_assume_(e)
#define IN
#define OUT
#define OPTIONAL
#define CONST const
#define APIENTRY
#define NTAPI
#define WINAPI
#define __stdcall
#define __cdecl
#define STDCALL
#define PAGED_CODE()
#define PAGED_CODE_SEG
#define NONPAGED_CODE_SEG
#define UNREFERENCED_PARAMETER(p) ((void)(p))
#define C_ASSERT(e) WDDMSIM_STATIC_ASSERT(e, #e)
#define FIELD_OFFSET(type, field) ((LONG)offsetof(type, field))
#define IN_CONST_HANDLE const HANDLE
#define IN_PDXGKARG_BUILDPAGINGBUFFER DXGKARG_BUILDPAGINGBUFFER *

/* ---------------------------------------------------------------------------------------------------------------
 * Fixed-width LLP64 types.
 */
typedef void VOID;
typedef void *PVOID;
typedef const void *PCVOID;
typedef char CHAR;
typedef char CCHAR;
typedef unsigned char UCHAR;
typedef unsigned char BYTE;
typedef int16_t SHORT;
typedef int16_t CSHORT;
typedef uint16_t USHORT;
typedef uint16_t WORD;
typedef int32_t LONG;
typedef int32_t INT;
typedef uint32_t ULONG;
typedef uint32_t UINT;
typedef uint32_t DWORD;
typedef int32_t BOOL;
typedef uint8_t UINT8;
typedef uint16_t UINT16;
typedef uint32_t UINT32;
typedef uint64_t UINT64;
typedef int32_t INT32;
typedef int64_t INT64;
typedef int64_t LONGLONG;
typedef uint64_t ULONGLONG;
typedef uint64_t ULONG64;
typedef int64_t LONG64;
typedef int64_t LONG_PTR;
typedef uint64_t ULONG_PTR;
typedef uint64_t SIZE_T;
typedef int64_t SSIZE_T;
typedef uint64_t DWORD_PTR;
typedef UCHAR BOOLEAN;
typedef BOOLEAN *PBOOLEAN;
typedef PVOID HANDLE;
typedef HANDLE *PHANDLE;
typedef LONG NTSTATUS;
typedef UCHAR *PUCHAR;
typedef USHORT *PUSHORT;
typedef ULONG *PULONG;
typedef UINT *PUINT;
typedef LONG *PLONG;
typedef ULONGLONG *PULONGLONG;
typedef SIZE_T *PSIZE_T;
typedef ULONG_PTR *PULONG_PTR;
typedef CHAR *PCHAR;
typedef CHAR *PSTR;
typedef const CHAR *PCSTR;
#if defined(__SIZEOF_WCHAR_T__) && __SIZEOF_WCHAR_T__ == 2
typedef wchar_t WCHAR; /* built with -fshort-wchar: L"..." literals are WCHAR strings */
#else
typedef uint16_t WCHAR;
#endif
typedef WCHAR *PWCHAR;
typedef WCHAR *PWSTR;
typedef const WCHAR *PCWSTR;
typedef ULONG_PTR PFN_NUMBER;
typedef PFN_NUMBER *PPFN_NUMBER;
typedef ULONG_PTR DXGK_PAGE_NUMBER;
typedef UINT64 D3DGPU_VIRTUAL_ADDRESS;
typedef UINT64 D3DGPU_SIZE_T;
typedef CCHAR KPROCESSOR_MODE;
typedef UCHAR KIRQL;

#ifndef TRUE
#define TRUE 1
#endif
#ifndef FALSE
#define FALSE 0
#endif
#define D3DGPU_NULL 0

/* LARGE_INTEGER: a 64-bit value also readable as its two 32-bit halves. */
typedef union _LARGE_INTEGER {
    WDDMSIM_EXT struct {
        ULONG LowPart;
        LONG HighPart;
    };
    struct {
        ULONG LowPart;
        LONG HighPart;
    } u;
    LONGLONG QuadPart;
} LARGE_INTEGER, *PLARGE_INTEGER;

typedef LARGE_INTEGER PHYSICAL_ADDRESS, *PPHYSICAL_ADDRESS;

/* D3DGPU_PHYSICAL_ADDRESS (d3dukmdt.h): a segment and the offset in it. */
typedef struct _D3DGPU_PHYSICAL_ADDRESS {
    UINT SegmentId;
    UINT Padding;
    UINT64 SegmentOffset;
} D3DGPU_PHYSICAL_ADDRESS;

/* ---------------------------------------------------------------------------------------------------------------
 * NTSTATUS (ntstatus.h; wddm-spec.md section 5.1; the values of wddmsim.ddi.status.NTSTATUS).
 */
#define WDDMSIM_NTSTATUS(v) ((NTSTATUS)(ULONG)(v))
#define NT_SUCCESS(Status) (((NTSTATUS)(Status)) >= 0)
#define STATUS_SUCCESS WDDMSIM_NTSTATUS(0x00000000u)
#define STATUS_PENDING WDDMSIM_NTSTATUS(0x00000103u)
#define STATUS_UNSUCCESSFUL WDDMSIM_NTSTATUS(0xC0000001u)
#define STATUS_NOT_IMPLEMENTED WDDMSIM_NTSTATUS(0xC0000002u)
#define STATUS_INVALID_HANDLE WDDMSIM_NTSTATUS(0xC0000008u)
#define STATUS_INVALID_PARAMETER WDDMSIM_NTSTATUS(0xC000000Du)
#define STATUS_NO_MEMORY WDDMSIM_NTSTATUS(0xC0000017u)
#define STATUS_ILLEGAL_INSTRUCTION WDDMSIM_NTSTATUS(0xC000001Du)
#define STATUS_BUFFER_TOO_SMALL WDDMSIM_NTSTATUS(0xC0000023u)
#define STATUS_INTEGER_OVERFLOW WDDMSIM_NTSTATUS(0xC0000095u)
#define STATUS_PRIVILEGED_INSTRUCTION WDDMSIM_NTSTATUS(0xC0000096u)
#define STATUS_NOT_SUPPORTED WDDMSIM_NTSTATUS(0xC00000BBu)
#define STATUS_INVALID_USER_BUFFER WDDMSIM_NTSTATUS(0xC00000E8u)
#define STATUS_POSSIBLE_DEADLOCK WDDMSIM_NTSTATUS(0xC0000194u)
#define STATUS_DEVICE_REMOVED WDDMSIM_NTSTATUS(0xC00002B6u)
#define STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER WDDMSIM_NTSTATUS(0xC01E0001u)
#define STATUS_GRAPHICS_NO_VIDEO_MEMORY WDDMSIM_NTSTATUS(0xC01E0100u)
#define STATUS_GRAPHICS_CANT_LOCK_MEMORY WDDMSIM_NTSTATUS(0xC01E0101u)
#define STATUS_GRAPHICS_ALLOCATION_BUSY WDDMSIM_NTSTATUS(0xC01E0102u)
#define STATUS_GRAPHICS_TOO_MANY_REFERENCES WDDMSIM_NTSTATUS(0xC01E0103u)
#define STATUS_GRAPHICS_TRY_AGAIN_LATER WDDMSIM_NTSTATUS(0xC01E0104u)
#define STATUS_GRAPHICS_TRY_AGAIN_NOW WDDMSIM_NTSTATUS(0xC01E0105u)
#define STATUS_GRAPHICS_ALLOCATION_INVALID WDDMSIM_NTSTATUS(0xC01E0106u)
#define STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNAVAILABLE WDDMSIM_NTSTATUS(0xC01E0107u)
#define STATUS_GRAPHICS_UNSWIZZLING_APERTURE_UNSUPPORTED WDDMSIM_NTSTATUS(0xC01E0108u)
#define STATUS_GRAPHICS_CANT_EVICT_PINNED_ALLOCATION WDDMSIM_NTSTATUS(0xC01E0109u)
#define STATUS_GRAPHICS_INVALID_ALLOCATION_USAGE WDDMSIM_NTSTATUS(0xC01E0110u)
#define STATUS_GRAPHICS_CANT_RENDER_LOCKED_ALLOCATION WDDMSIM_NTSTATUS(0xC01E0111u)
#define STATUS_GRAPHICS_ALLOCATION_CLOSED WDDMSIM_NTSTATUS(0xC01E0112u)
#define STATUS_GRAPHICS_INVALID_ALLOCATION_INSTANCE WDDMSIM_NTSTATUS(0xC01E0113u)
#define STATUS_GRAPHICS_INVALID_ALLOCATION_HANDLE WDDMSIM_NTSTATUS(0xC01E0114u)
#define STATUS_GRAPHICS_WRONG_ALLOCATION_DEVICE WDDMSIM_NTSTATUS(0xC01E0115u)
#define STATUS_GRAPHICS_ALLOCATION_CONTENT_LOST WDDMSIM_NTSTATUS(0xC01E0116u)

/* ---------------------------------------------------------------------------------------------------------------
 * Pages and the MDL (WDM; the x64 layout: 48 bytes, the PFN array right after the header).
 */
#define PAGE_SIZE 0x1000u
#define PAGE_SHIFT 12u
#define BYTE_OFFSET(Va) ((ULONG)((ULONG_PTR)(Va) & (PAGE_SIZE - 1)))
#define PAGE_ALIGN(Va) ((PVOID)((ULONG_PTR)(Va) & ~(ULONG_PTR)(PAGE_SIZE - 1)))
#define BYTES_TO_PAGES(Size) (((SIZE_T)(Size) >> PAGE_SHIFT) + ((((SIZE_T)(Size)) & (PAGE_SIZE - 1)) != 0))
#define ROUND_TO_PAGES(Size) (((ULONG_PTR)(Size) + PAGE_SIZE - 1) & ~(ULONG_PTR)(PAGE_SIZE - 1))
#define ADDRESS_AND_SIZE_TO_SPAN_PAGES(Va, Size) \
    ((ULONG)((((ULONG_PTR)(Size)) >> PAGE_SHIFT) + \
             ((BYTE_OFFSET(Va) + (((ULONG_PTR)(Size)) & (PAGE_SIZE - 1)) + PAGE_SIZE - 1) >> PAGE_SHIFT)))

struct _EPROCESS;

typedef struct _MDL {
    struct _MDL *Next;
    CSHORT Size;     /* bytes of the header plus the PFN array */
    CSHORT MdlFlags; /* MDL_* below */
    struct _EPROCESS *Process;
    PVOID MappedSystemVa; /* valid when MDL_MAPPED_TO_SYSTEM_VA or MDL_SOURCE_IS_NONPAGED_POOL is set */
    PVOID StartVa;
    ULONG ByteCount;
    ULONG ByteOffset;
} MDL, *PMDL;

#define MDL_MAPPED_TO_SYSTEM_VA 0x0001
#define MDL_PAGES_LOCKED 0x0002
#define MDL_SOURCE_IS_NONPAGED_POOL 0x0004
#define MDL_ALLOCATED_FIXED_SIZE 0x0008
#define MDL_PARTIAL 0x0010
#define MDL_PARTIAL_HAS_BEEN_MAPPED 0x0020
#define MDL_IO_PAGE_READ 0x0040
#define MDL_WRITE_OPERATION 0x0080
#define MDL_LOCKED_PAGE_TABLES 0x0100
#define MDL_PARENT_MAPPED_SYSTEM_VA MDL_LOCKED_PAGE_TABLES
#define MDL_FREE_EXTRA_PTES 0x0200
#define MDL_DESCRIBES_AWE 0x0400
#define MDL_IO_SPACE 0x0800
#define MDL_NETWORK_HEADER 0x1000
#define MDL_MAPPING_CAN_FAIL 0x2000
#define MDL_PAGE_CONTENTS_INVARIANT 0x4000
#define MDL_ALLOCATED_MUST_SUCCEED MDL_PAGE_CONTENTS_INVARIANT
#define MDL_INTERNAL 0x8000

#define MmGetMdlPfnArray(Mdl) ((PPFN_NUMBER)((Mdl) + 1))
#define MmGetMdlVirtualAddress(Mdl) ((PVOID)((PCHAR)((Mdl)->StartVa) + (Mdl)->ByteOffset))
#define MmGetMdlByteCount(Mdl) ((Mdl)->ByteCount)
#define MmGetMdlByteOffset(Mdl) ((Mdl)->ByteOffset)
#define MmGetMdlBaseVa(Mdl) ((Mdl)->StartVa)

typedef enum _MEMORY_CACHING_TYPE {
    MmNonCached = 0,
    MmCached = 1,
    MmWriteCombined = 2,
    MmHardwareCoherentCached = 3,
    MmNonCachedUnordered = 4,
    MmUSWCCached = 5,
    MmMaximumCacheType = 6,
    MmNotMapped = -1
} MEMORY_CACHING_TYPE;

typedef enum _MM_PAGE_PRIORITY {
    LowPagePriority = 0,
    NormalPagePriority = 16,
    HighPagePriority = 32
} MM_PAGE_PRIORITY;

#define KernelMode ((KPROCESSOR_MODE)0)
#define UserMode ((KPROCESSOR_MODE)1)
#define MdlMappingNoWrite 0x80000000u
#define MdlMappingNoExecute 0x40000000u

/* ---------------------------------------------------------------------------------------------------------------
 * Kernel services the bridge supplies at run time (decision 0101).  The bridge fills one table and stores its
 * address in WddmsimKernelServices (found with dlsym) before the first DDI call.  Every function receives the
 * table's Context first.
 */
#define WDDMSIM_KERNEL_SERVICES_VERSION 1u

typedef PVOID (*PFN_WDDMSIM_MAP_LOCKED_PAGES)(PVOID Context, PMDL Mdl, ULONG AccessMode, ULONG CacheType,
                                              PVOID RequestedAddress, ULONG BugCheckOnFailure, ULONG Priority);
typedef VOID (*PFN_WDDMSIM_UNMAP_LOCKED_PAGES)(PVOID Context, PVOID BaseAddress, PMDL Mdl);
typedef VOID (*PFN_WDDMSIM_LOG)(PVOID Context, ULONG Level, PCSTR Message);
typedef VOID (*PFN_WDDMSIM_BUGCHECK)(PVOID Context, ULONG BugCheckCode, ULONG_PTR P1, ULONG_PTR P2, ULONG_PTR P3,
                                     ULONG_PTR P4);

typedef struct _WDDMSIM_KERNEL_SERVICES {
    ULONG Version; /* WDDMSIM_KERNEL_SERVICES_VERSION */
    ULONG Size;    /* sizeof(WDDMSIM_KERNEL_SERVICES) as the bridge knows it */
    PVOID Context;
    PFN_WDDMSIM_MAP_LOCKED_PAGES MapLockedPagesSpecifyCache; /* a virtually contiguous view of the MDL's pages */
    PFN_WDDMSIM_UNMAP_LOCKED_PAGES UnmapLockedPages;         /* releases a view MapLockedPagesSpecifyCache gave */
    PFN_WDDMSIM_LOG Log;                                      /* one formatted DbgPrint line */
    PFN_WDDMSIM_BUGCHECK BugCheck;                            /* KeBugCheckEx: records the stop; must not return */
} WDDMSIM_KERNEL_SERVICES;

/* Set by the bridge after dlopen; a weak definition, so a library links without any wddmsim object file. */
WDDMSIM_EXPORT WDDMSIM_WEAK const WDDMSIM_KERNEL_SERVICES *WddmsimKernelServices;

#define WDDMSIM_HAS_SERVICE(Name)                                                                            \
    (WddmsimKernelServices != NULL &&                                                                        \
     WddmsimKernelServices->Size >= offsetof(WDDMSIM_KERNEL_SERVICES, Name) + sizeof(PVOID) &&               \
     WddmsimKernelServices->Name != NULL)

/* MmMapLockedPagesSpecifyCache: NULL when no bridge is attached (as a failed mapping would be). */
static inline PVOID MmMapLockedPagesSpecifyCache(PMDL MemoryDescriptorList, KPROCESSOR_MODE AccessMode,
                                                 MEMORY_CACHING_TYPE CacheType, PVOID RequestedAddress,
                                                 ULONG BugCheckOnFailure, ULONG Priority) {
    if (!WDDMSIM_HAS_SERVICE(MapLockedPagesSpecifyCache)) {
        return NULL;
    }
    return WddmsimKernelServices->MapLockedPagesSpecifyCache(WddmsimKernelServices->Context, MemoryDescriptorList,
                                                             (ULONG)(UCHAR)AccessMode, (ULONG)CacheType,
                                                             RequestedAddress, BugCheckOnFailure, Priority);
}

static inline VOID MmUnmapLockedPages(PVOID BaseAddress, PMDL MemoryDescriptorList) {
    if (WDDMSIM_HAS_SERVICE(UnmapLockedPages)) {
        WddmsimKernelServices->UnmapLockedPages(WddmsimKernelServices->Context, BaseAddress, MemoryDescriptorList);
    }
}

/* The WDK's macro: the existing system view when there is one, else a new mapping (which the caller unmaps). */
#define MmGetSystemAddressForMdlSafe(Mdl, Priority)                                                       \
    (((Mdl)->MdlFlags & (MDL_MAPPED_TO_SYSTEM_VA | MDL_SOURCE_IS_NONPAGED_POOL))                          \
         ? ((Mdl)->MappedSystemVa)                                                                        \
         : MmMapLockedPagesSpecifyCache((Mdl), KernelMode, MmCached, NULL, FALSE, (ULONG)(Priority)))

#define DPFLTR_ERROR_LEVEL 0
#define DPFLTR_WARNING_LEVEL 1
#define DPFLTR_TRACE_LEVEL 2
#define DPFLTR_INFO_LEVEL 3
#define DPFLTR_IHVVIDEO_ID 80

static inline ULONG WddmsimVLog(ULONG Level, PCSTR Format, va_list Args) {
    char line[512];
    vsnprintf(line, sizeof line, Format, Args);
    if (WDDMSIM_HAS_SERVICE(Log)) {
        WddmsimKernelServices->Log(WddmsimKernelServices->Context, Level, line);
    } else {
        fputs(line, stderr);
    }
    return (ULONG)STATUS_SUCCESS;
}

WDDMSIM_PRINTF(1, 2) static inline ULONG DbgPrint(PCSTR Format, ...) {
    va_list args;
    va_start(args, Format);
    ULONG status = WddmsimVLog(DPFLTR_ERROR_LEVEL, Format, args);
    va_end(args);
    return status;
}

WDDMSIM_PRINTF(3, 4) static inline ULONG DbgPrintEx(ULONG ComponentId, ULONG Level, PCSTR Format, ...) {
    va_list args;
    (void)ComponentId;
    va_start(args, Format);
    ULONG status = WddmsimVLog(Level, Format, args);
    va_end(args);
    return status;
}

/* KeBugCheckEx never returns: the bridge records the stop code; if its service returns, the process stops. */
WDDMSIM_NORETURN static inline VOID KeBugCheckEx(ULONG BugCheckCode, ULONG_PTR P1, ULONG_PTR P2, ULONG_PTR P3,
                                                 ULONG_PTR P4) {
    if (WDDMSIM_HAS_SERVICE(BugCheck)) {
        WddmsimKernelServices->BugCheck(WddmsimKernelServices->Context, BugCheckCode, P1, P2, P3, P4);
    }
    abort();
}

#define KeBugCheck(Code) KeBugCheckEx((Code), 0, 0, 0, 0)
#define NT_ASSERT(e) \
    ((e) ? (void)0 : (void)DbgPrint("wddmsim: NT_ASSERT failed: %s (%s:%d)\n", #e, __FILE__, __LINE__))
#define NT_ASSERTMSG(msg, e) NT_ASSERT(e)
#ifndef ASSERT
#define ASSERT(e) NT_ASSERT(e)
#endif

#define RtlCopyMemory(Destination, Source, Length) memcpy((Destination), (Source), (Length))
#define RtlMoveMemory(Destination, Source, Length) memmove((Destination), (Source), (Length))
#define RtlFillMemory(Destination, Length, Fill) memset((Destination), (int)(Fill), (Length))
#define RtlZeroMemory(Destination, Length) memset((Destination), 0, (Length))
#define RtlEqualMemory(Destination, Source, Length) (!memcmp((Destination), (Source), (Length)))

/* ---------------------------------------------------------------------------------------------------------------
 * DDI enumerations (wddm-spec.md sections 1.2, 1.3, 2.4; the values of wddmsim.ddi).
 */
typedef enum _DXGK_BUILDPAGINGBUFFER_OPERATION {
    DXGK_OPERATION_TRANSFER = 0,
    DXGK_OPERATION_FILL = 1,
    DXGK_OPERATION_DISCARD_CONTENT = 2,
    DXGK_OPERATION_READ_PHYSICAL = 3,
    DXGK_OPERATION_WRITE_PHYSICAL = 4,
    DXGK_OPERATION_MAP_APERTURE_SEGMENT = 5,
    DXGK_OPERATION_UNMAP_APERTURE_SEGMENT = 6,
    DXGK_OPERATION_SPECIAL_LOCK_TRANSFER = 7,
    DXGK_OPERATION_VIRTUAL_TRANSFER = 8,
    DXGK_OPERATION_VIRTUAL_FILL = 9,
    DXGK_OPERATION_INIT_CONTEXT_RESOURCE = 10,
    DXGK_OPERATION_UPDATE_PAGE_TABLE = 11,
    DXGK_OPERATION_FLUSH_TLB = 12,
    DXGK_OPERATION_UPDATE_CONTEXT_ALLOCATION = 13,
    DXGK_OPERATION_COPY_PAGE_TABLE_ENTRIES = 14,
    DXGK_OPERATION_NOTIFY_RESIDENCY = 15,
    DXGK_OPERATION_SIGNAL_MONITORED_FENCE = 16,
    DXGK_OPERATION_MAP_APERTURE_SEGMENT2 = 17,
    /* 18-25 are named by the documents but their payloads are not researched: they travel as Reserved. */
    DXGK_OPERATION_NOTIFY_FENCE_RESIDENCY = 18,
    DXGK_OPERATION_MAP_MMU = 19,
    DXGK_OPERATION_UNMAP_MMU = 20,
    DXGK_OPERATION_NOTIFY_RESIDENCY2 = 21,
    DXGK_OPERATION_RESERVED22 = 22,
    DXGK_OPERATION_TRANSFER2 = 23,
    DXGK_OPERATION_FILL2 = 24,
    DXGK_OPERATION_DISCARD_CONTENT2 = 25
} DXGK_BUILDPAGINGBUFFER_OPERATION;

#define DXGK_OPERATION_MAP_APERTURE DXGK_OPERATION_MAP_APERTURE_SEGMENT
#define DXGK_OPERATION_UNMAP_APERTURE DXGK_OPERATION_UNMAP_APERTURE_SEGMENT

typedef enum _DXGK_MEMORY_TRANSFER_DIRECTION {
    DXGK_MEMORY_TRANSFER_DIRECTION_LOCAL_TO_SYSTEM = 0,
    DXGK_MEMORY_TRANSFER_DIRECTION_SYSTEM_TO_LOCAL = 1,
    DXGK_MEMORY_TRANSFER_DIRECTION_LOCAL_TO_LOCAL = 2
} DXGK_MEMORY_TRANSFER_DIRECTION;

typedef enum _DXGK_PAGETABLEUPDATEMODE {
    DXGK_PAGETABLEUPDATE_CPU_VIRTUAL = 0,
    DXGK_PAGETABLEUPDATE_GPU_VIRTUAL = 1,
    DXGK_PAGETABLEUPDATE_GPU_PHYSICAL = 2
} DXGK_PAGETABLEUPDATEMODE;

typedef enum _DXGK_PTE_PAGE_SIZE {
    DXGK_PTE_PAGE_TABLE_PAGE_4KB = 0,
    DXGK_PTE_PAGE_TABLE_PAGE_64KB = 1
} DXGK_PTE_PAGE_SIZE;

/* ---------------------------------------------------------------------------------------------------------------
 * Flag unions (bit positions as wddmsim.ddi.flags; LSB first, GCC and MSVC agree for one base type).
 */
typedef struct _DXGK_TRANSFERFLAGS {
    union {
        WDDMSIM_EXT struct {
            UINT Swizzle : 1;
            UINT Unswizzle : 1;
            UINT AllocationIsIdle : 1;
            UINT TransferStart : 1;
            UINT TransferEnd : 1;
            UINT Reserved : 27;
        };
        UINT Value;
    };
} DXGK_TRANSFERFLAGS;

typedef struct _DXGK_DISCARDCONTENTFLAGS {
    union {
        WDDMSIM_EXT struct {
            UINT AllocationIsIdle : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_DISCARDCONTENTFLAGS;

typedef struct _DXGK_MAPAPERTUREFLAGS {
    union {
        WDDMSIM_EXT struct {
            UINT CacheCoherent : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_MAPAPERTUREFLAGS;

/* The word member of this one is named Flags, not Value (d3dkmddi.h). */
typedef struct _DXGK_TRANSFERVIRTUALFLAGS {
    union {
        WDDMSIM_EXT struct {
            UINT Src64KBPages : 1;
            UINT Dst64KBPages : 1;
            UINT Reserved : 30;
        };
        UINT Flags;
    };
} DXGK_TRANSFERVIRTUALFLAGS;

/* A plain bit-field struct: no union, no Value member. */
typedef struct _DXGK_UPDATEPAGETABLEFLAGS {
    UINT Repeat : 1;
    UINT InitialUpdate : 1;
    UINT NotifyEviction : 1;
    UINT Use64KBPages : 1;
    UINT Reserved : 28;
} DXGK_UPDATEPAGETABLEFLAGS;

typedef struct _DXGK_ADL_FLAGS {
    UINT32 Contiguous : 1;
    UINT32 Reserved : 31;
} DXGK_ADL_FLAGS;

/* DXGK_PTE (d3dukmdt.h): the flags word and the page address (a page number, decision 0002). */
typedef struct _DXGK_PTE {
    union {
        WDDMSIM_EXT struct {
            ULONGLONG Valid : 1;
            ULONGLONG Zero : 1;
            ULONGLONG CacheCoherent : 1;
            ULONGLONG ReadOnly : 1;
            ULONGLONG NoExecute : 1;
            ULONGLONG Segment : 5;
            ULONGLONG LargePage : 1;
            ULONGLONG PhysicalAdapterIndex : 6;
            ULONGLONG PageTablePageSize : 2;
            ULONGLONG SystemReserved0 : 1;
            ULONGLONG Reserved : 44;
        };
        ULONGLONG Flags;
    };
    union {
        ULONGLONG PageAddress;
        ULONGLONG PageTableAddress;
    };
} DXGK_PTE;

/* DXGK_ADL: contiguous pages from BasePageNumber, or the array Pages. */
typedef struct _DXGK_ADL {
    UINT32 PageCount;
    DXGK_ADL_FLAGS Flags;
    union {
        DXGK_PAGE_NUMBER BasePageNumber;
        const DXGK_PAGE_NUMBER *Pages;
    };
} DXGK_ADL;

/* ---------------------------------------------------------------------------------------------------------------
 * The operation payloads.  The seeds declare operations 0-7, 10 and 17 as anonymous structs inside the union;
 * this header names their types (decision 0100) with the names wddmsim.ddi.paging uses.  Member access is the
 * WDK's: pArgs->Transfer.Source.pMdl.
 */
typedef struct _DXGK_TRANSFER_LOCATION {
    UINT SegmentId; /* 0: system memory, described by pMdl */
    union {
        LARGE_INTEGER SegmentAddress;
        MDL *pMdl;
    };
} DXGK_TRANSFER_LOCATION;

typedef struct _DXGK_FILL_DESTINATION {
    UINT SegmentId;
    LARGE_INTEGER SegmentAddress;
} DXGK_FILL_DESTINATION;

typedef struct _DXGK_INITCONTEXTRESOURCE_DESTINATION {
    UINT SegmentId;
    union {
        LARGE_INTEGER SegmentAddress;
        MDL *pMdl;
    };
    PVOID VirtualAddress;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtualAddress;
} DXGK_INITCONTEXTRESOURCE_DESTINATION;

typedef struct _DXGK_BUILDPAGINGBUFFER_TRANSFER {
    HANDLE hAllocation;
    UINT TransferOffset; /* segment side only; the same on every pass */
    SIZE_T TransferSize;
    DXGK_TRANSFER_LOCATION Source;
    DXGK_TRANSFER_LOCATION Destination;
    DXGK_TRANSFERFLAGS Flags;
    UINT MdlOffset; /* in pages: MmGetMdlPfnArray(pMdl)[MdlOffset] */
} DXGK_BUILDPAGINGBUFFER_TRANSFER;

typedef struct _DXGK_BUILDPAGINGBUFFER_FILL {
    HANDLE hAllocation;
    SIZE_T FillSize;
    UINT FillPattern;
    DXGK_FILL_DESTINATION Destination;
} DXGK_BUILDPAGINGBUFFER_FILL;

typedef struct _DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT {
    HANDLE hAllocation;
    DXGK_DISCARDCONTENTFLAGS Flags;
    UINT SegmentId;
    PHYSICAL_ADDRESS SegmentAddress;
} DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT;

typedef struct _DXGK_BUILDPAGINGBUFFER_READPHYSICAL {
    UINT SegmentId;
    PHYSICAL_ADDRESS PhysicalAddress;
} DXGK_BUILDPAGINGBUFFER_READPHYSICAL;

typedef struct _DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL {
    UINT SegmentId;
    PHYSICAL_ADDRESS PhysicalAddress;
} DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL;

typedef struct _DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT {
    HANDLE hDevice;
    HANDLE hAllocation;
    UINT SegmentId;
    SIZE_T OffsetInPages;
    SIZE_T NumberOfPages;
    PMDL pMdl;
    DXGK_MAPAPERTUREFLAGS Flags;
    ULONG MdlOffset;
} DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT;

typedef struct _DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT {
    HANDLE hDevice;
    HANDLE hAllocation;
    UINT SegmentId;
    SIZE_T OffsetInPages;
    SIZE_T NumberOfPages;
    PHYSICAL_ADDRESS DummyPage;
} DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT;

typedef struct _DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER {
    HANDLE hAllocation;
    UINT TransferOffset;
    SIZE_T TransferSize;
    DXGK_TRANSFER_LOCATION Source;
    DXGK_TRANSFER_LOCATION Destination;
    DXGK_TRANSFERFLAGS Flags;
    UINT SwizzlingRangeId;
    UINT SwizzlingRangeData;
} DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER;

typedef struct _DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE {
    HANDLE hAllocation;
    DXGK_INITCONTEXTRESOURCE_DESTINATION Destination;
} DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE;

typedef struct _DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL {
    HANDLE hAllocation;
    D3DGPU_SIZE_T AllocationOffsetInBytes; /* never added to the VAs */
    D3DGPU_SIZE_T TransferSizeInBytes;
    D3DGPU_VIRTUAL_ADDRESS SourceVirtualAddress;
    D3DGPU_VIRTUAL_ADDRESS DestinationVirtualAddress;
    D3DGPU_VIRTUAL_ADDRESS SourcePageTable;
    DXGK_MEMORY_TRANSFER_DIRECTION TransferDirection;
    DXGK_TRANSFERVIRTUALFLAGS Flags;
    D3DGPU_VIRTUAL_ADDRESS DestinationPageTable;
} DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL;

typedef struct _DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL {
    HANDLE hAllocation;
    D3DGPU_SIZE_T AllocationOffsetInBytes;
    D3DGPU_SIZE_T FillSizeInBytes;
    UINT FillPattern;
    D3DGPU_VIRTUAL_ADDRESS DestinationVirtualAddress;
} DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL;

typedef union _DXGK_PAGETABLEUPDATEADDRESS {
    PVOID CpuVirtual;
    D3DGPU_PHYSICAL_ADDRESS GpuPhysical;
    D3DGPU_VIRTUAL_ADDRESS GpuVirtual;
} DXGK_PAGETABLEUPDATEADDRESS;

typedef struct _DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE {
    UINT PageTableLevel;
    HANDLE hAllocation;
    DXGK_PAGETABLEUPDATEADDRESS PageTableAddress; /* by UpdateMode */
    DXGK_PTE *pPageTableEntries;
    UINT StartIndex;
    UINT NumPageTableEntries;
    UINT Reserved0;
    DXGK_UPDATEPAGETABLEFLAGS Flags;
    UINT64 DriverProtection;
    UINT64 AllocationOffsetInBytes;
    HANDLE hProcess;
    DXGK_PAGETABLEUPDATEMODE UpdateMode;
    DXGK_PTE *pPageTableEntries64KB;
    D3DGPU_VIRTUAL_ADDRESS FirstPteVirtualAddress;
} DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE;

typedef struct _DXGK_BUILDPAGINGBUFFER_FLUSHTLB {
    D3DGPU_PHYSICAL_ADDRESS RootPageTableAddress;
    HANDLE hProcess;
    D3DGPU_VIRTUAL_ADDRESS StartVirtualAddress; /* Start = End = 0: the whole VA range */
    D3DGPU_VIRTUAL_ADDRESS EndVirtualAddress;
} DXGK_BUILDPAGINGBUFFER_FLUSHTLB;

typedef struct _DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION {
    D3DGPU_VIRTUAL_ADDRESS ContextAllocation;
    UINT64 ContextAllocationSize;
    PVOID pDriverPrivateData;
    UINT DriverPrivateDataSize;
} DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION;

typedef struct _DXGK_BUILDPAGINGBUFFER_COPY_RANGE {
    UINT NumPageTableEntries;
    D3DGPU_VIRTUAL_ADDRESS SrcPageTableAddress; /* 64 KB aligned */
    D3DGPU_VIRTUAL_ADDRESS DstPageTableAddress; /* 64 KB aligned */
    UINT SrcStartPteIndex;
    UINT DstStartPteIndex;
} DXGK_BUILDPAGINGBUFFER_COPY_RANGE;

typedef struct _DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES {
    UINT NumRanges;
    DXGK_BUILDPAGINGBUFFER_COPY_RANGE *pRanges;
} DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES;

/* The documents print this union as two overlapping bit-fields; a struct keeps Resident at bit 0 (decision 0100). */
typedef struct _DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY {
    HANDLE hAllocation;
    D3DGPU_PHYSICAL_ADDRESS PhysicalAddress; /* (0, 0) on eviction */
    union {
        WDDMSIM_EXT struct {
            UINT Resident : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY;

typedef struct _DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE {
    D3DGPU_VIRTUAL_ADDRESS MonitoredFenceGpuVa;
    UINT64 MonitoredFenceValue;
} DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE;

typedef struct _DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 {
    HANDLE hDevice;
    HANDLE hAllocation;
    UINT SegmentId;
    SIZE_T OffsetInPages;
    SIZE_T NumberOfPages;
    DXGK_ADL Adl;
    DXGK_MAPAPERTUREFLAGS Flags;
    ULONG AdlOffset; /* in pages */
    PVOID CpuVisibleAddress;
} DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2;

typedef struct _DXGK_BUILDPAGINGBUFFER_RESERVED {
    UINT Reserved[64];
} DXGK_BUILDPAGINGBUFFER_RESERVED;

/* The argument block of DxgkDdiBuildPagingBuffer: 320 bytes, the union at 40 (its largest arm is Reserved). */
typedef struct _DXGKARG_BUILDPAGINGBUFFER {
    VOID *pDmaBuffer; /* [in/out] first free byte; advance past the last byte written */
    UINT DmaSize;     /* [in/out] bytes available at pDmaBuffer */
    VOID *pDmaBufferPrivateData;
    UINT DmaBufferPrivateDataSize;
    DXGK_BUILDPAGINGBUFFER_OPERATION Operation;
    UINT MultipassOffset; /* [in/out] zero before the first call of an operation */
    union {
        DXGK_BUILDPAGINGBUFFER_TRANSFER Transfer;
        DXGK_BUILDPAGINGBUFFER_FILL Fill;
        DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT DiscardContent;
        DXGK_BUILDPAGINGBUFFER_READPHYSICAL ReadPhysical;
        DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL WritePhysical;
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT MapApertureSegment;
        DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT UnmapApertureSegment;
        DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER SpecialLockTransfer;
        DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE InitContextResource;
        DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL TransferVirtual;
        DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL FillVirtual;
        DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE UpdatePageTable;
        DXGK_BUILDPAGINGBUFFER_FLUSHTLB FlushTlb;
        DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES CopyPageTableEntries;
        DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION UpdateContextAllocation;
        DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY NotifyResidency;
        DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE SignalMonitoredFence;
        DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 MapApertureSegment2;
        DXGK_BUILDPAGINGBUFFER_RESERVED Reserved;
    };
    HANDLE hSystemContext;
    D3DGPU_VIRTUAL_ADDRESS DmaBufferGpuVirtualAddress;
    UINT DmaBufferWriteOffset;
} DXGKARG_BUILDPAGINGBUFFER;


/* ---------------------------------------------------------------------------------------------------------------
 * Entry points the bridge looks up (decision 0102).  DxgkDdiBuildPagingBuffer is required; the others optional.
 */
typedef NTSTATUS APIENTRY DXGKDDI_BUILDPAGINGBUFFER(const HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pBuildPagingBuffer);
typedef DXGKDDI_BUILDPAGINGBUFFER *PDXGKDDI_BUILDPAGINGBUFFER;

typedef NTSTATUS APIENTRY DXGKDDI_RESETFROMTIMEOUT(const HANDLE hAdapter);
typedef DXGKDDI_RESETFROMTIMEOUT *PDXGKDDI_RESETFROMTIMEOUT;

/* DXGKARG_CREATEALLOCATION is not in the documents this header is written from: opaque here. */
typedef struct _DXGKARG_CREATEALLOCATION DXGKARG_CREATEALLOCATION;
typedef NTSTATUS APIENTRY DXGKDDI_CREATEALLOCATION(const HANDLE hAdapter, DXGKARG_CREATEALLOCATION *pCreateAllocation);
typedef DXGKDDI_CREATEALLOCATION *PDXGKDDI_CREATEALLOCATION;

/* DxgkDdiQueryAdapterInfo, reduced to the GpuMmu queries (decision 0102): segments come from the adapter TOML. */
typedef enum _DXGK_QUERYADAPTERINFOTYPE {
    DXGKQAITYPE_DRIVERCAPS = 1,
    DXGKQAITYPE_QUERYSEGMENT = 2,
    DXGKQAITYPE_QUERYSEGMENT3 = 5,
    DXGKQAITYPE_QUERYSEGMENT4 = 11,
    DXGKQAITYPE_SEGMENTMEMORYSTATE = 12,
    DXGKQAITYPE_GPUMMUCAPS = 13,
    DXGKQAITYPE_PAGETABLELEVELDESC = 14,
    DXGKQAITYPE_PHYSICALADAPTERCAPS = 15
} DXGK_QUERYADAPTERINFOTYPE;

typedef struct _DXGK_QUERYADAPTERINFOFLAGS {
    union {
        WDDMSIM_EXT struct {
            UINT VirtualMachineData : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    };
} DXGK_QUERYADAPTERINFOFLAGS;

typedef struct _DXGKARG_QUERYADAPTERINFO {
    DXGK_QUERYADAPTERINFOTYPE Type;
    VOID *pInputData;
    UINT InputDataSize;
    VOID *pOutputData;
    UINT OutputDataSize;
    DXGK_QUERYADAPTERINFOFLAGS Flags;
    HANDLE hKmdProcessHandle;
} DXGKARG_QUERYADAPTERINFO;

typedef NTSTATUS APIENTRY DXGKDDI_QUERYADAPTERINFO(const HANDLE hAdapter,
                                                   const DXGKARG_QUERYADAPTERINFO *pQueryAdapterInfo);
typedef DXGKDDI_QUERYADAPTERINFO *PDXGKDDI_QUERYADAPTERINFO;

typedef struct _DXGK_QUERYGPUMMUCAPSIN {
    UINT PhysicalAdapterIndex;
} DXGK_QUERYGPUMMUCAPSIN;

typedef struct _DXGK_GPUMMUCAPS {
    union {
        WDDMSIM_EXT struct {
            UINT ReadOnlyMemorySupported : 1;
            UINT NoExecuteMemorySupported : 1;
            UINT ZeroInPteSupported : 1;
            UINT ExplicitPageTableInvalidation : 1;
            UINT CacheCoherentMemorySupported : 1;
            UINT PageTableUpdateRequireAddressSpaceIdle : 1;
            UINT LargePageSupported : 1;
            UINT DualPteSupported : 1;
            UINT AllowNonAlignedLargePageAddress : 1;
            UINT SysMem64KBPageSupported : 1;
            UINT InvalidTlbEntriesNotCached : 1;
            UINT SysMemLargePageSupported : 1;
            UINT CachedPageTables : 1;
            UINT PerPtePageSize : 1;
            UINT OpportunisticSysMem64KBPageSupported : 1;
            UINT Reserved : 17;
        };
        UINT Value;
    } Flags;
    DXGK_PAGETABLEUPDATEMODE PageTableUpdateMode;
    UINT VirtualAddressBitCount;
    UINT LeafPageTableSizeFor64KPagesInBytes;
    UINT PageTableLevelCount;
    union {
        WDDMSIM_EXT struct {
            UINT SourcePageTableVaInTransfer : 1;
            UINT Reserved : 31;
        };
        UINT Value;
    } LegacyBehaviors;
} DXGK_GPUMMUCAPS;

typedef struct _DXGK_QUERYPAGETABLELEVELDESCIN {
    WORD LevelIndex;
    WORD PhysicalAdapterIndex;
} DXGK_QUERYPAGETABLELEVELDESCIN;

typedef struct _DXGK_PAGE_TABLE_LEVEL_DESC {
    UINT PageTableIndexBitCount;
    UINT PageTableSegmentId;
    UINT PagingProcessPageTableSegmentId;
    UINT PageTableSizeInBytes;
    UINT PageTableAlignmentInBytes;
} DXGK_PAGE_TABLE_LEVEL_DESC;

/* ---------------------------------------------------------------------------------------------------------------
 * The executor ABI (issue 21 item 3; decision 0103): a driver's own paging-buffer executor, called at submission
 * in submission order on the simulated clock, with the GPU's services.  Every service returns STATUS_SUCCESS or
 * STATUS_INVALID_PARAMETER (an address outside the memory it names; nothing is changed).
 */
#define WDDMSIM_GPU_SERVICES_VERSION 1u
#define WDDMSIM_PAGING_SUBMISSION_VERSION 1u

typedef NTSTATUS (*PFN_WDDMSIM_READ_LOCAL)(PVOID Context, UINT SegmentId, UINT64 SegmentAddress, PVOID Buffer,
                                           SIZE_T Length);
typedef NTSTATUS (*PFN_WDDMSIM_WRITE_LOCAL)(PVOID Context, UINT SegmentId, UINT64 SegmentAddress, const VOID *Buffer,
                                            SIZE_T Length);
typedef NTSTATUS (*PFN_WDDMSIM_READ_SYSTEM)(PVOID Context, UINT64 PhysicalAddress, PVOID Buffer, SIZE_T Length);
typedef NTSTATUS (*PFN_WDDMSIM_WRITE_SYSTEM)(PVOID Context, UINT64 PhysicalAddress, const VOID *Buffer,
                                             SIZE_T Length);
typedef NTSTATUS (*PFN_WDDMSIM_SET_APERTURE_PAGE)(PVOID Context, UINT SegmentId, UINT64 PageIndex, PFN_NUMBER Pfn,
                                                  UINT MapApertureFlags);
typedef NTSTATUS (*PFN_WDDMSIM_CLEAR_APERTURE_PAGE)(PVOID Context, UINT SegmentId, UINT64 PageIndex);
typedef NTSTATUS (*PFN_WDDMSIM_SIGNAL_FENCE_VIRTUAL)(PVOID Context, D3DGPU_VIRTUAL_ADDRESS FenceGpuVa, UINT64 Value);
typedef NTSTATUS (*PFN_WDDMSIM_SIGNAL_FENCE_PHYSICAL)(PVOID Context, UINT SegmentId, UINT64 Address, UINT64 Value);
typedef NTSTATUS (*PFN_WDDMSIM_READ_PAGE_TABLE)(PVOID Context, UINT SegmentId, UINT64 TableOffset, UINT StartIndex,
                                                UINT Count, DXGK_PTE *Entries);
typedef NTSTATUS (*PFN_WDDMSIM_WRITE_PAGE_TABLE)(PVOID Context, UINT SegmentId, UINT64 TableOffset, UINT StartIndex,
                                                 UINT Count, const DXGK_PTE *Entries);
typedef NTSTATUS (*PFN_WDDMSIM_FLUSH_TLB)(PVOID Context, UINT RootSegmentId, UINT64 RootOffset,
                                          D3DGPU_VIRTUAL_ADDRESS StartVirtualAddress,
                                          D3DGPU_VIRTUAL_ADDRESS EndVirtualAddress);

typedef struct _WDDMSIM_GPU_SERVICES {
    ULONG Version; /* WDDMSIM_GPU_SERVICES_VERSION */
    ULONG Size;    /* sizeof(WDDMSIM_GPU_SERVICES) as the simulator knows it */
    PVOID Context;
    PVOID LocalMemoryBase;  /* local memory as one CPU view indexed by segment address, or NULL */
    UINT64 LocalMemorySize; /* bytes of that view (0 when LocalMemoryBase is NULL) */
    PFN_WDDMSIM_READ_LOCAL ReadLocal;                   /* bytes at a segment address (as VidMm gives it) */
    PFN_WDDMSIM_WRITE_LOCAL WriteLocal;
    PFN_WDDMSIM_READ_SYSTEM ReadSystem;                 /* bytes at a system physical address (PFN << 12 + offset) */
    PFN_WDDMSIM_WRITE_SYSTEM WriteSystem;
    PFN_WDDMSIM_SET_APERTURE_PAGE SetAperturePage;     /* aperture page PageIndex -> system page Pfn */
    PFN_WDDMSIM_CLEAR_APERTURE_PAGE ClearAperturePage; /* aperture page PageIndex -> no page */
    PFN_WDDMSIM_SIGNAL_FENCE_VIRTUAL SignalFenceVirtual;   /* 64-bit store at a GPU VA */
    PFN_WDDMSIM_SIGNAL_FENCE_PHYSICAL SignalFencePhysical; /* 64-bit store at (segment, offset); 0 = system */
    PFN_WDDMSIM_READ_PAGE_TABLE ReadPageTable;   /* DXGK_PTEs of the table at (segment, offset) */
    PFN_WDDMSIM_WRITE_PAGE_TABLE WritePageTable;
    PFN_WDDMSIM_FLUSH_TLB FlushTlb;              /* Start = End = 0: everything under the root */
    PFN_WDDMSIM_LOG Log;
} WDDMSIM_GPU_SERVICES;

/* One submitted paging buffer: the range [StartOffset, EndOffset) of the buffer at pDmaBuffer. */
typedef struct _WDDMSIM_PAGING_SUBMISSION {
    ULONG Version; /* WDDMSIM_PAGING_SUBMISSION_VERSION */
    ULONG Size;
    VOID *pDmaBuffer; /* the start of the paging buffer (what pDmaBuffer was on the first call) */
    UINT DmaBufferSize;
    UINT StartOffset;
    UINT EndOffset;
    UINT DmaBufferPrivateDataSize;
    VOID *pDmaBufferPrivateData;
    UINT64 SubmissionFenceId;
    D3DGPU_VIRTUAL_ADDRESS DmaBufferGpuVirtualAddress;
} WDDMSIM_PAGING_SUBMISSION;

typedef NTSTATUS WDDMSIM_EXECUTE_PAGING_BUFFER(const WDDMSIM_GPU_SERVICES *pServices,
                                               const WDDMSIM_PAGING_SUBMISSION *pSubmission);
typedef WDDMSIM_EXECUTE_PAGING_BUFFER *PFN_WDDMSIM_EXECUTE_PAGING_BUFFER;

/* ---------------------------------------------------------------------------------------------------------------
 * Layout assertions, generated from the ctypes mirror (python -m wddmsim.drivers.native.render --write):
 * sizeof every structure and offsetof every member.
 */
/* BEGIN GENERATED LAYOUT ASSERTIONS */
/* END GENERATED LAYOUT ASSERTIONS */

WDDMSIM_EXTERN_C_END

#endif /* WDDMSIM_DDK_H */
