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

/* clang++ -pedantic reports anonymous structs nested in anonymous unions despite __extension__: quiet it for the
 * header's own declarations only (popped at the end of the file). */
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnested-anon-types"
#pragma clang diagnostic ignored "-Wgnu-anonymous-struct"
#endif

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

/* DXGKQAITYPE_QUERYSEGMENT4 (WDDM 2.0+; wddm-spec.md 4.2-4.3; decision 0135).  Two calls: the first with
 * NbSegment == 0 asks only for the count; the second has pSegmentDescriptor pointing at NbSegment descriptors
 * SegmentDescriptorStride bytes apart, the stride the driver reports (at least sizeof(DXGK_SEGMENTDESCRIPTOR4)). */
typedef struct _DXGK_SEGMENTFLAGS {
    union {
        WDDMSIM_EXT struct {
            UINT Aperture : 1;
            UINT Agp : 1;
            UINT CpuVisible : 1;
            UINT UseBanking : 1;
            UINT CacheCoherent : 1;
            UINT PitchAlignment : 1;
            UINT PopulatedFromSystemMemory : 1;
            UINT PreservedDuringStandby : 1;
            UINT PreservedDuringHibernate : 1;
            UINT PartiallyPreservedDuringHibernate : 1;
            UINT DirectFlip : 1;
            UINT Use64KBPages : 1;
            UINT ReservedSysMem : 1;
            UINT SupportsCpuHostAperture : 1;
            UINT SupportsCachedCpuHostAperture : 1;
            UINT ApplicationTarget : 1;
            UINT VprSupported : 1;
            UINT VprPreservedDuringStandby : 1;
            UINT EncryptedPagingSupported : 1;
            UINT LocalBudgetGroup : 1;
            UINT NonLocalBudgetGroup : 1;
            UINT PopulatedByReservedDDRByFirmware : 1;
            UINT Reserved : 10;
        };
        UINT Value;
    };
} DXGK_SEGMENTFLAGS;

typedef struct _DXGK_CPUHOSTAPERTURE {
    UINT64 PhysicalAddress;
    UINT32 SizeInPages;
} DXGK_CPUHOSTAPERTURE;

typedef struct _DXGK_SEGMENTDESCRIPTOR4 {
    DXGK_SEGMENTFLAGS Flags;
    PHYSICAL_ADDRESS BaseAddress;
    SIZE_T Size;
    SIZE_T CommitLimit;
    SIZE_T SystemMemoryEndAddress;
    union {
        PHYSICAL_ADDRESS CpuTranslatedAddress;
        DXGK_CPUHOSTAPERTURE CpuHostAperture;
    };
    UINT NumInvalidMemoryRanges;
    SIZE_T VprRangeStartOffset;
    SIZE_T VprRangeSize;
    UINT VprAlignment;
    UINT NumVprSupported;
    UINT VprReserveSize;
    UINT NumUEFIFrameBufferRanges;
} DXGK_SEGMENTDESCRIPTOR4;

typedef struct _DXGK_QUERYSEGMENTIN4 {
    UINT PhysicalAdapterIndex;
} DXGK_QUERYSEGMENTIN4;

typedef struct _DXGK_QUERYSEGMENTOUT4 {
    UINT NbSegment;
    BYTE *pSegmentDescriptor;
    SIZE_T SegmentDescriptorStride;
    UINT PagingBufferSegmentId;
    UINT PagingBufferSize;
    UINT PagingBufferPrivateDataSize;
} DXGK_QUERYSEGMENTOUT4;

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
WDDMSIM_STATIC_ASSERT(sizeof(LARGE_INTEGER) == 8, "sizeof(LARGE_INTEGER)");
WDDMSIM_STATIC_ASSERT(offsetof(LARGE_INTEGER, LowPart) == 0, "offsetof(LARGE_INTEGER, LowPart)");
WDDMSIM_STATIC_ASSERT(sizeof(((LARGE_INTEGER *)0)->LowPart) == 4, "sizeof(LARGE_INTEGER.LowPart)");
WDDMSIM_STATIC_ASSERT(offsetof(LARGE_INTEGER, HighPart) == 4, "offsetof(LARGE_INTEGER, HighPart)");
WDDMSIM_STATIC_ASSERT(sizeof(((LARGE_INTEGER *)0)->HighPart) == 4, "sizeof(LARGE_INTEGER.HighPart)");
WDDMSIM_STATIC_ASSERT(offsetof(LARGE_INTEGER, u) == 0, "offsetof(LARGE_INTEGER, u)");
WDDMSIM_STATIC_ASSERT(sizeof(((LARGE_INTEGER *)0)->u) == 8, "sizeof(LARGE_INTEGER.u)");
WDDMSIM_STATIC_ASSERT(offsetof(LARGE_INTEGER, QuadPart) == 0, "offsetof(LARGE_INTEGER, QuadPart)");
WDDMSIM_STATIC_ASSERT(sizeof(((LARGE_INTEGER *)0)->QuadPart) == 8, "sizeof(LARGE_INTEGER.QuadPart)");
WDDMSIM_STATIC_ASSERT(sizeof(D3DGPU_PHYSICAL_ADDRESS) == 16, "sizeof(D3DGPU_PHYSICAL_ADDRESS)");
WDDMSIM_STATIC_ASSERT(offsetof(D3DGPU_PHYSICAL_ADDRESS, SegmentId) == 0, "offsetof(D3DGPU_PHYSICAL_ADDRESS, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((D3DGPU_PHYSICAL_ADDRESS *)0)->SegmentId) == 4, "sizeof(D3DGPU_PHYSICAL_ADDRESS.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(D3DGPU_PHYSICAL_ADDRESS, Padding) == 4, "offsetof(D3DGPU_PHYSICAL_ADDRESS, Padding)");
WDDMSIM_STATIC_ASSERT(sizeof(((D3DGPU_PHYSICAL_ADDRESS *)0)->Padding) == 4, "sizeof(D3DGPU_PHYSICAL_ADDRESS.Padding)");
WDDMSIM_STATIC_ASSERT(offsetof(D3DGPU_PHYSICAL_ADDRESS, SegmentOffset) == 8, "offsetof(D3DGPU_PHYSICAL_ADDRESS, SegmentOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((D3DGPU_PHYSICAL_ADDRESS *)0)->SegmentOffset) == 8, "sizeof(D3DGPU_PHYSICAL_ADDRESS.SegmentOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(MDL) == 48, "sizeof(MDL)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, Next) == 0, "offsetof(MDL, Next)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->Next) == 8, "sizeof(MDL.Next)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, Size) == 8, "offsetof(MDL, Size)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->Size) == 2, "sizeof(MDL.Size)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, MdlFlags) == 10, "offsetof(MDL, MdlFlags)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->MdlFlags) == 2, "sizeof(MDL.MdlFlags)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, Process) == 16, "offsetof(MDL, Process)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->Process) == 8, "sizeof(MDL.Process)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, MappedSystemVa) == 24, "offsetof(MDL, MappedSystemVa)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->MappedSystemVa) == 8, "sizeof(MDL.MappedSystemVa)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, StartVa) == 32, "offsetof(MDL, StartVa)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->StartVa) == 8, "sizeof(MDL.StartVa)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, ByteCount) == 40, "offsetof(MDL, ByteCount)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->ByteCount) == 4, "sizeof(MDL.ByteCount)");
WDDMSIM_STATIC_ASSERT(offsetof(MDL, ByteOffset) == 44, "offsetof(MDL, ByteOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((MDL *)0)->ByteOffset) == 4, "sizeof(MDL.ByteOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(WDDMSIM_KERNEL_SERVICES) == 48, "sizeof(WDDMSIM_KERNEL_SERVICES)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, Version) == 0, "offsetof(WDDMSIM_KERNEL_SERVICES, Version)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->Version) == 4, "sizeof(WDDMSIM_KERNEL_SERVICES.Version)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, Size) == 4, "offsetof(WDDMSIM_KERNEL_SERVICES, Size)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->Size) == 4, "sizeof(WDDMSIM_KERNEL_SERVICES.Size)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, Context) == 8, "offsetof(WDDMSIM_KERNEL_SERVICES, Context)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->Context) == 8, "sizeof(WDDMSIM_KERNEL_SERVICES.Context)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, MapLockedPagesSpecifyCache) == 16, "offsetof(WDDMSIM_KERNEL_SERVICES, MapLockedPagesSpecifyCache)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->MapLockedPagesSpecifyCache) == 8, "sizeof(WDDMSIM_KERNEL_SERVICES.MapLockedPagesSpecifyCache)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, UnmapLockedPages) == 24, "offsetof(WDDMSIM_KERNEL_SERVICES, UnmapLockedPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->UnmapLockedPages) == 8, "sizeof(WDDMSIM_KERNEL_SERVICES.UnmapLockedPages)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, Log) == 32, "offsetof(WDDMSIM_KERNEL_SERVICES, Log)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->Log) == 8, "sizeof(WDDMSIM_KERNEL_SERVICES.Log)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_KERNEL_SERVICES, BugCheck) == 40, "offsetof(WDDMSIM_KERNEL_SERVICES, BugCheck)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_KERNEL_SERVICES *)0)->BugCheck) == 8, "sizeof(WDDMSIM_KERNEL_SERVICES.BugCheck)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_TRANSFERFLAGS) == 4, "sizeof(DXGK_TRANSFERFLAGS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_TRANSFERFLAGS, Value) == 0, "offsetof(DXGK_TRANSFERFLAGS, Value)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_TRANSFERFLAGS *)0)->Value) == 4, "sizeof(DXGK_TRANSFERFLAGS.Value)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_DISCARDCONTENTFLAGS) == 4, "sizeof(DXGK_DISCARDCONTENTFLAGS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_DISCARDCONTENTFLAGS, Value) == 0, "offsetof(DXGK_DISCARDCONTENTFLAGS, Value)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_DISCARDCONTENTFLAGS *)0)->Value) == 4, "sizeof(DXGK_DISCARDCONTENTFLAGS.Value)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_MAPAPERTUREFLAGS) == 4, "sizeof(DXGK_MAPAPERTUREFLAGS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_MAPAPERTUREFLAGS, Value) == 0, "offsetof(DXGK_MAPAPERTUREFLAGS, Value)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_MAPAPERTUREFLAGS *)0)->Value) == 4, "sizeof(DXGK_MAPAPERTUREFLAGS.Value)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_TRANSFERVIRTUALFLAGS) == 4, "sizeof(DXGK_TRANSFERVIRTUALFLAGS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_TRANSFERVIRTUALFLAGS, Flags) == 0, "offsetof(DXGK_TRANSFERVIRTUALFLAGS, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_TRANSFERVIRTUALFLAGS *)0)->Flags) == 4, "sizeof(DXGK_TRANSFERVIRTUALFLAGS.Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_UPDATEPAGETABLEFLAGS) == 4, "sizeof(DXGK_UPDATEPAGETABLEFLAGS)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_ADL_FLAGS) == 4, "sizeof(DXGK_ADL_FLAGS)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_PTE) == 16, "sizeof(DXGK_PTE)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PTE, Flags) == 0, "offsetof(DXGK_PTE, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PTE *)0)->Flags) == 8, "sizeof(DXGK_PTE.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PTE, PageAddress) == 8, "offsetof(DXGK_PTE, PageAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PTE *)0)->PageAddress) == 8, "sizeof(DXGK_PTE.PageAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PTE, PageTableAddress) == 8, "offsetof(DXGK_PTE, PageTableAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PTE *)0)->PageTableAddress) == 8, "sizeof(DXGK_PTE.PageTableAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_ADL) == 16, "sizeof(DXGK_ADL)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_ADL, PageCount) == 0, "offsetof(DXGK_ADL, PageCount)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_ADL *)0)->PageCount) == 4, "sizeof(DXGK_ADL.PageCount)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_ADL, Flags) == 4, "offsetof(DXGK_ADL, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_ADL *)0)->Flags) == 4, "sizeof(DXGK_ADL.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_ADL, BasePageNumber) == 8, "offsetof(DXGK_ADL, BasePageNumber)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_ADL *)0)->BasePageNumber) == 8, "sizeof(DXGK_ADL.BasePageNumber)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_ADL, Pages) == 8, "offsetof(DXGK_ADL, Pages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_ADL *)0)->Pages) == 8, "sizeof(DXGK_ADL.Pages)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_TRANSFER_LOCATION) == 16, "sizeof(DXGK_TRANSFER_LOCATION)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_TRANSFER_LOCATION, SegmentId) == 0, "offsetof(DXGK_TRANSFER_LOCATION, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_TRANSFER_LOCATION *)0)->SegmentId) == 4, "sizeof(DXGK_TRANSFER_LOCATION.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_TRANSFER_LOCATION, SegmentAddress) == 8, "offsetof(DXGK_TRANSFER_LOCATION, SegmentAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_TRANSFER_LOCATION *)0)->SegmentAddress) == 8, "sizeof(DXGK_TRANSFER_LOCATION.SegmentAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_TRANSFER_LOCATION, pMdl) == 8, "offsetof(DXGK_TRANSFER_LOCATION, pMdl)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_TRANSFER_LOCATION *)0)->pMdl) == 8, "sizeof(DXGK_TRANSFER_LOCATION.pMdl)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_FILL_DESTINATION) == 16, "sizeof(DXGK_FILL_DESTINATION)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_FILL_DESTINATION, SegmentId) == 0, "offsetof(DXGK_FILL_DESTINATION, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_FILL_DESTINATION *)0)->SegmentId) == 4, "sizeof(DXGK_FILL_DESTINATION.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_FILL_DESTINATION, SegmentAddress) == 8, "offsetof(DXGK_FILL_DESTINATION, SegmentAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_FILL_DESTINATION *)0)->SegmentAddress) == 8, "sizeof(DXGK_FILL_DESTINATION.SegmentAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION) == 32, "sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, SegmentId) == 0, "offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_INITCONTEXTRESOURCE_DESTINATION *)0)->SegmentId) == 4, "sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, SegmentAddress) == 8, "offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, SegmentAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_INITCONTEXTRESOURCE_DESTINATION *)0)->SegmentAddress) == 8, "sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION.SegmentAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, pMdl) == 8, "offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, pMdl)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_INITCONTEXTRESOURCE_DESTINATION *)0)->pMdl) == 8, "sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION.pMdl)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, VirtualAddress) == 16, "offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, VirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_INITCONTEXTRESOURCE_DESTINATION *)0)->VirtualAddress) == 8, "sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION.VirtualAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, GpuVirtualAddress) == 24, "offsetof(DXGK_INITCONTEXTRESOURCE_DESTINATION, GpuVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_INITCONTEXTRESOURCE_DESTINATION *)0)->GpuVirtualAddress) == 8, "sizeof(DXGK_INITCONTEXTRESOURCE_DESTINATION.GpuVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER) == 64, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, TransferOffset) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, TransferOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->TransferOffset) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.TransferOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, TransferSize) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, TransferSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->TransferSize) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.TransferSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, Source) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, Source)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->Source) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.Source)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, Destination) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, Destination)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->Destination) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.Destination)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, Flags) == 56, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, MdlOffset) == 60, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFER, MdlOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFER *)0)->MdlOffset) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFER.MdlOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_FILL) == 40, "sizeof(DXGK_BUILDPAGINGBUFFER_FILL)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILL, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_FILL, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILL *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FILL.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILL, FillSize) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_FILL, FillSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILL *)0)->FillSize) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FILL.FillSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILL, FillPattern) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_FILL, FillPattern)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILL *)0)->FillPattern) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_FILL.FillPattern)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILL, Destination) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_FILL, Destination)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILL *)0)->Destination) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_FILL.Destination)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT) == 24, "sizeof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, Flags) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, SegmentId) == 12, "offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT *)0)->SegmentId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, SegmentAddress) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT, SegmentAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT *)0)->SegmentAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_DISCARDCONTENT.SegmentAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL, SegmentId) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_READPHYSICAL *)0)->SegmentId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL, PhysicalAddress) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL, PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_READPHYSICAL *)0)->PhysicalAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_READPHYSICAL.PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL, SegmentId) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL *)0)->SegmentId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL, PhysicalAddress) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL, PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL *)0)->PhysicalAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_WRITEPHYSICAL.PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT) == 56, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, hDevice) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, hDevice)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->hDevice) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.hDevice)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, hAllocation) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, SegmentId) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->SegmentId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, OffsetInPages) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, OffsetInPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->OffsetInPages) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.OffsetInPages)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, NumberOfPages) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, NumberOfPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->NumberOfPages) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.NumberOfPages)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, pMdl) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, pMdl)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->pMdl) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.pMdl)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, Flags) == 48, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, MdlOffset) == 52, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT, MdlOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT *)0)->MdlOffset) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT.MdlOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT) == 48, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, hDevice) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, hDevice)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *)0)->hDevice) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT.hDevice)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, hAllocation) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, SegmentId) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *)0)->SegmentId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, OffsetInPages) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, OffsetInPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *)0)->OffsetInPages) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT.OffsetInPages)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, NumberOfPages) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, NumberOfPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *)0)->NumberOfPages) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT.NumberOfPages)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, DummyPage) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT, DummyPage)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT *)0)->DummyPage) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UNMAPAPERTURESEGMENT.DummyPage)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER) == 72, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, TransferOffset) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, TransferOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->TransferOffset) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.TransferOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, TransferSize) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, TransferSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->TransferSize) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.TransferSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, Source) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, Source)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->Source) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.Source)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, Destination) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, Destination)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->Destination) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.Destination)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, Flags) == 56, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, SwizzlingRangeId) == 60, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, SwizzlingRangeId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->SwizzlingRangeId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.SwizzlingRangeId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, SwizzlingRangeData) == 64, "offsetof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER, SwizzlingRangeData)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER *)0)->SwizzlingRangeData) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_SPECIALLOCKTRANSFER.SwizzlingRangeData)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE) == 40, "sizeof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE, Destination) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE, Destination)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE *)0)->Destination) == 32, "sizeof(DXGK_BUILDPAGINGBUFFER_INITCONTEXTRESOURCE.Destination)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL) == 64, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, AllocationOffsetInBytes) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, AllocationOffsetInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->AllocationOffsetInBytes) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.AllocationOffsetInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, TransferSizeInBytes) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, TransferSizeInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->TransferSizeInBytes) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.TransferSizeInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, SourceVirtualAddress) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, SourceVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->SourceVirtualAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.SourceVirtualAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, DestinationVirtualAddress) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, DestinationVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->DestinationVirtualAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.DestinationVirtualAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, SourcePageTable) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, SourcePageTable)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->SourcePageTable) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.SourcePageTable)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, TransferDirection) == 48, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, TransferDirection)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->TransferDirection) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.TransferDirection)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, Flags) == 52, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, DestinationPageTable) == 56, "offsetof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL, DestinationPageTable)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL *)0)->DestinationPageTable) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_TRANSFERVIRTUAL.DestinationPageTable)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL) == 40, "sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, AllocationOffsetInBytes) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, AllocationOffsetInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL *)0)->AllocationOffsetInBytes) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL.AllocationOffsetInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, FillSizeInBytes) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, FillSizeInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL *)0)->FillSizeInBytes) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL.FillSizeInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, FillPattern) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, FillPattern)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL *)0)->FillPattern) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL.FillPattern)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, DestinationVirtualAddress) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL, DestinationVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL *)0)->DestinationVirtualAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FILLVIRTUAL.DestinationVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_PAGETABLEUPDATEADDRESS) == 16, "sizeof(DXGK_PAGETABLEUPDATEADDRESS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGETABLEUPDATEADDRESS, CpuVirtual) == 0, "offsetof(DXGK_PAGETABLEUPDATEADDRESS, CpuVirtual)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGETABLEUPDATEADDRESS *)0)->CpuVirtual) == 8, "sizeof(DXGK_PAGETABLEUPDATEADDRESS.CpuVirtual)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGETABLEUPDATEADDRESS, GpuPhysical) == 0, "offsetof(DXGK_PAGETABLEUPDATEADDRESS, GpuPhysical)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGETABLEUPDATEADDRESS *)0)->GpuPhysical) == 16, "sizeof(DXGK_PAGETABLEUPDATEADDRESS.GpuPhysical)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGETABLEUPDATEADDRESS, GpuVirtual) == 0, "offsetof(DXGK_PAGETABLEUPDATEADDRESS, GpuVirtual)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGETABLEUPDATEADDRESS *)0)->GpuVirtual) == 8, "sizeof(DXGK_PAGETABLEUPDATEADDRESS.GpuVirtual)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE) == 104, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, PageTableLevel) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, PageTableLevel)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->PageTableLevel) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.PageTableLevel)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, hAllocation) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, PageTableAddress) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, PageTableAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->PageTableAddress) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.PageTableAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, pPageTableEntries) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, pPageTableEntries)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->pPageTableEntries) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.pPageTableEntries)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, StartIndex) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, StartIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->StartIndex) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.StartIndex)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, NumPageTableEntries) == 44, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, NumPageTableEntries)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->NumPageTableEntries) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.NumPageTableEntries)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, Reserved0) == 48, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, Reserved0)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->Reserved0) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.Reserved0)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, Flags) == 52, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, DriverProtection) == 56, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, DriverProtection)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->DriverProtection) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.DriverProtection)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, AllocationOffsetInBytes) == 64, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, AllocationOffsetInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->AllocationOffsetInBytes) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.AllocationOffsetInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, hProcess) == 72, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, hProcess)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->hProcess) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.hProcess)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, UpdateMode) == 80, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, UpdateMode)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->UpdateMode) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.UpdateMode)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, pPageTableEntries64KB) == 88, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, pPageTableEntries64KB)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->pPageTableEntries64KB) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.pPageTableEntries64KB)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, FirstPteVirtualAddress) == 96, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE, FirstPteVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE *)0)->FirstPteVirtualAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATEPAGETABLE.FirstPteVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB) == 40, "sizeof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, RootPageTableAddress) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, RootPageTableAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FLUSHTLB *)0)->RootPageTableAddress) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB.RootPageTableAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, hProcess) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, hProcess)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FLUSHTLB *)0)->hProcess) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB.hProcess)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, StartVirtualAddress) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, StartVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FLUSHTLB *)0)->StartVirtualAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB.StartVirtualAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, EndVirtualAddress) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB, EndVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_FLUSHTLB *)0)->EndVirtualAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_FLUSHTLB.EndVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION) == 32, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, ContextAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, ContextAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION *)0)->ContextAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION.ContextAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, ContextAllocationSize) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, ContextAllocationSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION *)0)->ContextAllocationSize) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION.ContextAllocationSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, pDriverPrivateData) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, pDriverPrivateData)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION *)0)->pDriverPrivateData) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION.pDriverPrivateData)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, DriverPrivateDataSize) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION, DriverPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION *)0)->DriverPrivateDataSize) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_UPDATECONTEXTALLOCATION.DriverPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE) == 32, "sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, NumPageTableEntries) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, NumPageTableEntries)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPY_RANGE *)0)->NumPageTableEntries) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE.NumPageTableEntries)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, SrcPageTableAddress) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, SrcPageTableAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPY_RANGE *)0)->SrcPageTableAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE.SrcPageTableAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, DstPageTableAddress) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, DstPageTableAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPY_RANGE *)0)->DstPageTableAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE.DstPageTableAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, SrcStartPteIndex) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, SrcStartPteIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPY_RANGE *)0)->SrcStartPteIndex) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE.SrcStartPteIndex)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, DstStartPteIndex) == 28, "offsetof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE, DstStartPteIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPY_RANGE *)0)->DstStartPteIndex) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_COPY_RANGE.DstStartPteIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES, NumRanges) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES, NumRanges)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES *)0)->NumRanges) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES.NumRanges)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES, pRanges) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES, pRanges)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES *)0)->pRanges) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_COPYPAGETABLEENTRIES.pRanges)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY) == 32, "sizeof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY, hAllocation) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY, PhysicalAddress) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY, PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY *)0)->PhysicalAddress) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY.PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY, Value) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY, Value)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY *)0)->Value) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_NOTIFYRESIDENCY.Value)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE, MonitoredFenceGpuVa) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE, MonitoredFenceGpuVa)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE *)0)->MonitoredFenceGpuVa) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE.MonitoredFenceGpuVa)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE, MonitoredFenceValue) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE, MonitoredFenceValue)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE *)0)->MonitoredFenceValue) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_SIGNALMONITOREDFENCE.MonitoredFenceValue)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2) == 72, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, hDevice) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, hDevice)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->hDevice) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.hDevice)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, hAllocation) == 8, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, hAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->hAllocation) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.hAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, SegmentId) == 16, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, SegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->SegmentId) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.SegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, OffsetInPages) == 24, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, OffsetInPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->OffsetInPages) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.OffsetInPages)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, NumberOfPages) == 32, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, NumberOfPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->NumberOfPages) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.NumberOfPages)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, Adl) == 40, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, Adl)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->Adl) == 16, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.Adl)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, Flags) == 56, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->Flags) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, AdlOffset) == 60, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, AdlOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->AdlOffset) == 4, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.AdlOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, CpuVisibleAddress) == 64, "offsetof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2, CpuVisibleAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2 *)0)->CpuVisibleAddress) == 8, "sizeof(DXGK_BUILDPAGINGBUFFER_MAPAPERTURESEGMENT2.CpuVisibleAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_BUILDPAGINGBUFFER_RESERVED) == 256, "sizeof(DXGK_BUILDPAGINGBUFFER_RESERVED)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_BUILDPAGINGBUFFER_RESERVED, Reserved) == 0, "offsetof(DXGK_BUILDPAGINGBUFFER_RESERVED, Reserved)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_BUILDPAGINGBUFFER_RESERVED *)0)->Reserved) == 256, "sizeof(DXGK_BUILDPAGINGBUFFER_RESERVED.Reserved)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGKARG_BUILDPAGINGBUFFER) == 320, "sizeof(DXGKARG_BUILDPAGINGBUFFER)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, pDmaBuffer) == 0, "offsetof(DXGKARG_BUILDPAGINGBUFFER, pDmaBuffer)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->pDmaBuffer) == 8, "sizeof(DXGKARG_BUILDPAGINGBUFFER.pDmaBuffer)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaSize) == 8, "offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->DmaSize) == 4, "sizeof(DXGKARG_BUILDPAGINGBUFFER.DmaSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, pDmaBufferPrivateData) == 16, "offsetof(DXGKARG_BUILDPAGINGBUFFER, pDmaBufferPrivateData)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->pDmaBufferPrivateData) == 8, "sizeof(DXGKARG_BUILDPAGINGBUFFER.pDmaBufferPrivateData)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaBufferPrivateDataSize) == 24, "offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaBufferPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->DmaBufferPrivateDataSize) == 4, "sizeof(DXGKARG_BUILDPAGINGBUFFER.DmaBufferPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, Operation) == 28, "offsetof(DXGKARG_BUILDPAGINGBUFFER, Operation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->Operation) == 4, "sizeof(DXGKARG_BUILDPAGINGBUFFER.Operation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, MultipassOffset) == 32, "offsetof(DXGKARG_BUILDPAGINGBUFFER, MultipassOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->MultipassOffset) == 4, "sizeof(DXGKARG_BUILDPAGINGBUFFER.MultipassOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, Transfer) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, Transfer)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->Transfer) == 64, "sizeof(DXGKARG_BUILDPAGINGBUFFER.Transfer)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, Fill) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, Fill)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->Fill) == 40, "sizeof(DXGKARG_BUILDPAGINGBUFFER.Fill)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, DiscardContent) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, DiscardContent)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->DiscardContent) == 24, "sizeof(DXGKARG_BUILDPAGINGBUFFER.DiscardContent)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, ReadPhysical) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, ReadPhysical)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->ReadPhysical) == 16, "sizeof(DXGKARG_BUILDPAGINGBUFFER.ReadPhysical)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, WritePhysical) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, WritePhysical)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->WritePhysical) == 16, "sizeof(DXGKARG_BUILDPAGINGBUFFER.WritePhysical)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, MapApertureSegment) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, MapApertureSegment)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->MapApertureSegment) == 56, "sizeof(DXGKARG_BUILDPAGINGBUFFER.MapApertureSegment)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, UnmapApertureSegment) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, UnmapApertureSegment)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->UnmapApertureSegment) == 48, "sizeof(DXGKARG_BUILDPAGINGBUFFER.UnmapApertureSegment)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, SpecialLockTransfer) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, SpecialLockTransfer)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->SpecialLockTransfer) == 72, "sizeof(DXGKARG_BUILDPAGINGBUFFER.SpecialLockTransfer)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, InitContextResource) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, InitContextResource)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->InitContextResource) == 40, "sizeof(DXGKARG_BUILDPAGINGBUFFER.InitContextResource)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, TransferVirtual) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, TransferVirtual)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->TransferVirtual) == 64, "sizeof(DXGKARG_BUILDPAGINGBUFFER.TransferVirtual)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, FillVirtual) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, FillVirtual)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->FillVirtual) == 40, "sizeof(DXGKARG_BUILDPAGINGBUFFER.FillVirtual)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, UpdatePageTable) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, UpdatePageTable)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->UpdatePageTable) == 104, "sizeof(DXGKARG_BUILDPAGINGBUFFER.UpdatePageTable)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, FlushTlb) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, FlushTlb)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->FlushTlb) == 40, "sizeof(DXGKARG_BUILDPAGINGBUFFER.FlushTlb)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, CopyPageTableEntries) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, CopyPageTableEntries)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->CopyPageTableEntries) == 16, "sizeof(DXGKARG_BUILDPAGINGBUFFER.CopyPageTableEntries)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, UpdateContextAllocation) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, UpdateContextAllocation)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->UpdateContextAllocation) == 32, "sizeof(DXGKARG_BUILDPAGINGBUFFER.UpdateContextAllocation)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, NotifyResidency) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, NotifyResidency)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->NotifyResidency) == 32, "sizeof(DXGKARG_BUILDPAGINGBUFFER.NotifyResidency)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, SignalMonitoredFence) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, SignalMonitoredFence)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->SignalMonitoredFence) == 16, "sizeof(DXGKARG_BUILDPAGINGBUFFER.SignalMonitoredFence)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, MapApertureSegment2) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, MapApertureSegment2)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->MapApertureSegment2) == 72, "sizeof(DXGKARG_BUILDPAGINGBUFFER.MapApertureSegment2)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, Reserved) == 40, "offsetof(DXGKARG_BUILDPAGINGBUFFER, Reserved)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->Reserved) == 256, "sizeof(DXGKARG_BUILDPAGINGBUFFER.Reserved)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, hSystemContext) == 296, "offsetof(DXGKARG_BUILDPAGINGBUFFER, hSystemContext)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->hSystemContext) == 8, "sizeof(DXGKARG_BUILDPAGINGBUFFER.hSystemContext)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaBufferGpuVirtualAddress) == 304, "offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaBufferGpuVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->DmaBufferGpuVirtualAddress) == 8, "sizeof(DXGKARG_BUILDPAGINGBUFFER.DmaBufferGpuVirtualAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaBufferWriteOffset) == 312, "offsetof(DXGKARG_BUILDPAGINGBUFFER, DmaBufferWriteOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_BUILDPAGINGBUFFER *)0)->DmaBufferWriteOffset) == 4, "sizeof(DXGKARG_BUILDPAGINGBUFFER.DmaBufferWriteOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_QUERYADAPTERINFOFLAGS) == 4, "sizeof(DXGK_QUERYADAPTERINFOFLAGS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYADAPTERINFOFLAGS, Value) == 0, "offsetof(DXGK_QUERYADAPTERINFOFLAGS, Value)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYADAPTERINFOFLAGS *)0)->Value) == 4, "sizeof(DXGK_QUERYADAPTERINFOFLAGS.Value)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGKARG_QUERYADAPTERINFO) == 48, "sizeof(DXGKARG_QUERYADAPTERINFO)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, Type) == 0, "offsetof(DXGKARG_QUERYADAPTERINFO, Type)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->Type) == 4, "sizeof(DXGKARG_QUERYADAPTERINFO.Type)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, pInputData) == 8, "offsetof(DXGKARG_QUERYADAPTERINFO, pInputData)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->pInputData) == 8, "sizeof(DXGKARG_QUERYADAPTERINFO.pInputData)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, InputDataSize) == 16, "offsetof(DXGKARG_QUERYADAPTERINFO, InputDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->InputDataSize) == 4, "sizeof(DXGKARG_QUERYADAPTERINFO.InputDataSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, pOutputData) == 24, "offsetof(DXGKARG_QUERYADAPTERINFO, pOutputData)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->pOutputData) == 8, "sizeof(DXGKARG_QUERYADAPTERINFO.pOutputData)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, OutputDataSize) == 32, "offsetof(DXGKARG_QUERYADAPTERINFO, OutputDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->OutputDataSize) == 4, "sizeof(DXGKARG_QUERYADAPTERINFO.OutputDataSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, Flags) == 36, "offsetof(DXGKARG_QUERYADAPTERINFO, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->Flags) == 4, "sizeof(DXGKARG_QUERYADAPTERINFO.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGKARG_QUERYADAPTERINFO, hKmdProcessHandle) == 40, "offsetof(DXGKARG_QUERYADAPTERINFO, hKmdProcessHandle)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGKARG_QUERYADAPTERINFO *)0)->hKmdProcessHandle) == 8, "sizeof(DXGKARG_QUERYADAPTERINFO.hKmdProcessHandle)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_QUERYGPUMMUCAPSIN) == 4, "sizeof(DXGK_QUERYGPUMMUCAPSIN)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYGPUMMUCAPSIN, PhysicalAdapterIndex) == 0, "offsetof(DXGK_QUERYGPUMMUCAPSIN, PhysicalAdapterIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYGPUMMUCAPSIN *)0)->PhysicalAdapterIndex) == 4, "sizeof(DXGK_QUERYGPUMMUCAPSIN.PhysicalAdapterIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_GPUMMUCAPS) == 24, "sizeof(DXGK_GPUMMUCAPS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_GPUMMUCAPS, Flags) == 0, "offsetof(DXGK_GPUMMUCAPS, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_GPUMMUCAPS *)0)->Flags) == 4, "sizeof(DXGK_GPUMMUCAPS.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_GPUMMUCAPS, PageTableUpdateMode) == 4, "offsetof(DXGK_GPUMMUCAPS, PageTableUpdateMode)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_GPUMMUCAPS *)0)->PageTableUpdateMode) == 4, "sizeof(DXGK_GPUMMUCAPS.PageTableUpdateMode)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_GPUMMUCAPS, VirtualAddressBitCount) == 8, "offsetof(DXGK_GPUMMUCAPS, VirtualAddressBitCount)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_GPUMMUCAPS *)0)->VirtualAddressBitCount) == 4, "sizeof(DXGK_GPUMMUCAPS.VirtualAddressBitCount)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_GPUMMUCAPS, LeafPageTableSizeFor64KPagesInBytes) == 12, "offsetof(DXGK_GPUMMUCAPS, LeafPageTableSizeFor64KPagesInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_GPUMMUCAPS *)0)->LeafPageTableSizeFor64KPagesInBytes) == 4, "sizeof(DXGK_GPUMMUCAPS.LeafPageTableSizeFor64KPagesInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_GPUMMUCAPS, PageTableLevelCount) == 16, "offsetof(DXGK_GPUMMUCAPS, PageTableLevelCount)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_GPUMMUCAPS *)0)->PageTableLevelCount) == 4, "sizeof(DXGK_GPUMMUCAPS.PageTableLevelCount)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_GPUMMUCAPS, LegacyBehaviors) == 20, "offsetof(DXGK_GPUMMUCAPS, LegacyBehaviors)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_GPUMMUCAPS *)0)->LegacyBehaviors) == 4, "sizeof(DXGK_GPUMMUCAPS.LegacyBehaviors)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_QUERYPAGETABLELEVELDESCIN) == 4, "sizeof(DXGK_QUERYPAGETABLELEVELDESCIN)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYPAGETABLELEVELDESCIN, LevelIndex) == 0, "offsetof(DXGK_QUERYPAGETABLELEVELDESCIN, LevelIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYPAGETABLELEVELDESCIN *)0)->LevelIndex) == 2, "sizeof(DXGK_QUERYPAGETABLELEVELDESCIN.LevelIndex)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYPAGETABLELEVELDESCIN, PhysicalAdapterIndex) == 2, "offsetof(DXGK_QUERYPAGETABLELEVELDESCIN, PhysicalAdapterIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYPAGETABLELEVELDESCIN *)0)->PhysicalAdapterIndex) == 2, "sizeof(DXGK_QUERYPAGETABLELEVELDESCIN.PhysicalAdapterIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_PAGE_TABLE_LEVEL_DESC) == 20, "sizeof(DXGK_PAGE_TABLE_LEVEL_DESC)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableIndexBitCount) == 0, "offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableIndexBitCount)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGE_TABLE_LEVEL_DESC *)0)->PageTableIndexBitCount) == 4, "sizeof(DXGK_PAGE_TABLE_LEVEL_DESC.PageTableIndexBitCount)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableSegmentId) == 4, "offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableSegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGE_TABLE_LEVEL_DESC *)0)->PageTableSegmentId) == 4, "sizeof(DXGK_PAGE_TABLE_LEVEL_DESC.PageTableSegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PagingProcessPageTableSegmentId) == 8, "offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PagingProcessPageTableSegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGE_TABLE_LEVEL_DESC *)0)->PagingProcessPageTableSegmentId) == 4, "sizeof(DXGK_PAGE_TABLE_LEVEL_DESC.PagingProcessPageTableSegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableSizeInBytes) == 12, "offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableSizeInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGE_TABLE_LEVEL_DESC *)0)->PageTableSizeInBytes) == 4, "sizeof(DXGK_PAGE_TABLE_LEVEL_DESC.PageTableSizeInBytes)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableAlignmentInBytes) == 16, "offsetof(DXGK_PAGE_TABLE_LEVEL_DESC, PageTableAlignmentInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_PAGE_TABLE_LEVEL_DESC *)0)->PageTableAlignmentInBytes) == 4, "sizeof(DXGK_PAGE_TABLE_LEVEL_DESC.PageTableAlignmentInBytes)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_SEGMENTFLAGS) == 4, "sizeof(DXGK_SEGMENTFLAGS)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTFLAGS, Value) == 0, "offsetof(DXGK_SEGMENTFLAGS, Value)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTFLAGS *)0)->Value) == 4, "sizeof(DXGK_SEGMENTFLAGS.Value)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_CPUHOSTAPERTURE) == 16, "sizeof(DXGK_CPUHOSTAPERTURE)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_CPUHOSTAPERTURE, PhysicalAddress) == 0, "offsetof(DXGK_CPUHOSTAPERTURE, PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_CPUHOSTAPERTURE *)0)->PhysicalAddress) == 8, "sizeof(DXGK_CPUHOSTAPERTURE.PhysicalAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_CPUHOSTAPERTURE, SizeInPages) == 8, "offsetof(DXGK_CPUHOSTAPERTURE, SizeInPages)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_CPUHOSTAPERTURE *)0)->SizeInPages) == 4, "sizeof(DXGK_CPUHOSTAPERTURE.SizeInPages)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_SEGMENTDESCRIPTOR4) == 96, "sizeof(DXGK_SEGMENTDESCRIPTOR4)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, Flags) == 0, "offsetof(DXGK_SEGMENTDESCRIPTOR4, Flags)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->Flags) == 4, "sizeof(DXGK_SEGMENTDESCRIPTOR4.Flags)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, BaseAddress) == 8, "offsetof(DXGK_SEGMENTDESCRIPTOR4, BaseAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->BaseAddress) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.BaseAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, Size) == 16, "offsetof(DXGK_SEGMENTDESCRIPTOR4, Size)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->Size) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.Size)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, CommitLimit) == 24, "offsetof(DXGK_SEGMENTDESCRIPTOR4, CommitLimit)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->CommitLimit) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.CommitLimit)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, SystemMemoryEndAddress) == 32, "offsetof(DXGK_SEGMENTDESCRIPTOR4, SystemMemoryEndAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->SystemMemoryEndAddress) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.SystemMemoryEndAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, CpuTranslatedAddress) == 40, "offsetof(DXGK_SEGMENTDESCRIPTOR4, CpuTranslatedAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->CpuTranslatedAddress) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.CpuTranslatedAddress)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, CpuHostAperture) == 40, "offsetof(DXGK_SEGMENTDESCRIPTOR4, CpuHostAperture)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->CpuHostAperture) == 16, "sizeof(DXGK_SEGMENTDESCRIPTOR4.CpuHostAperture)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, NumInvalidMemoryRanges) == 56, "offsetof(DXGK_SEGMENTDESCRIPTOR4, NumInvalidMemoryRanges)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->NumInvalidMemoryRanges) == 4, "sizeof(DXGK_SEGMENTDESCRIPTOR4.NumInvalidMemoryRanges)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, VprRangeStartOffset) == 64, "offsetof(DXGK_SEGMENTDESCRIPTOR4, VprRangeStartOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->VprRangeStartOffset) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.VprRangeStartOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, VprRangeSize) == 72, "offsetof(DXGK_SEGMENTDESCRIPTOR4, VprRangeSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->VprRangeSize) == 8, "sizeof(DXGK_SEGMENTDESCRIPTOR4.VprRangeSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, VprAlignment) == 80, "offsetof(DXGK_SEGMENTDESCRIPTOR4, VprAlignment)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->VprAlignment) == 4, "sizeof(DXGK_SEGMENTDESCRIPTOR4.VprAlignment)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, NumVprSupported) == 84, "offsetof(DXGK_SEGMENTDESCRIPTOR4, NumVprSupported)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->NumVprSupported) == 4, "sizeof(DXGK_SEGMENTDESCRIPTOR4.NumVprSupported)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, VprReserveSize) == 88, "offsetof(DXGK_SEGMENTDESCRIPTOR4, VprReserveSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->VprReserveSize) == 4, "sizeof(DXGK_SEGMENTDESCRIPTOR4.VprReserveSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_SEGMENTDESCRIPTOR4, NumUEFIFrameBufferRanges) == 92, "offsetof(DXGK_SEGMENTDESCRIPTOR4, NumUEFIFrameBufferRanges)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_SEGMENTDESCRIPTOR4 *)0)->NumUEFIFrameBufferRanges) == 4, "sizeof(DXGK_SEGMENTDESCRIPTOR4.NumUEFIFrameBufferRanges)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_QUERYSEGMENTIN4) == 4, "sizeof(DXGK_QUERYSEGMENTIN4)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTIN4, PhysicalAdapterIndex) == 0, "offsetof(DXGK_QUERYSEGMENTIN4, PhysicalAdapterIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTIN4 *)0)->PhysicalAdapterIndex) == 4, "sizeof(DXGK_QUERYSEGMENTIN4.PhysicalAdapterIndex)");
WDDMSIM_STATIC_ASSERT(sizeof(DXGK_QUERYSEGMENTOUT4) == 40, "sizeof(DXGK_QUERYSEGMENTOUT4)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTOUT4, NbSegment) == 0, "offsetof(DXGK_QUERYSEGMENTOUT4, NbSegment)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTOUT4 *)0)->NbSegment) == 4, "sizeof(DXGK_QUERYSEGMENTOUT4.NbSegment)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTOUT4, pSegmentDescriptor) == 8, "offsetof(DXGK_QUERYSEGMENTOUT4, pSegmentDescriptor)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTOUT4 *)0)->pSegmentDescriptor) == 8, "sizeof(DXGK_QUERYSEGMENTOUT4.pSegmentDescriptor)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTOUT4, SegmentDescriptorStride) == 16, "offsetof(DXGK_QUERYSEGMENTOUT4, SegmentDescriptorStride)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTOUT4 *)0)->SegmentDescriptorStride) == 8, "sizeof(DXGK_QUERYSEGMENTOUT4.SegmentDescriptorStride)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTOUT4, PagingBufferSegmentId) == 24, "offsetof(DXGK_QUERYSEGMENTOUT4, PagingBufferSegmentId)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTOUT4 *)0)->PagingBufferSegmentId) == 4, "sizeof(DXGK_QUERYSEGMENTOUT4.PagingBufferSegmentId)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTOUT4, PagingBufferSize) == 28, "offsetof(DXGK_QUERYSEGMENTOUT4, PagingBufferSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTOUT4 *)0)->PagingBufferSize) == 4, "sizeof(DXGK_QUERYSEGMENTOUT4.PagingBufferSize)");
WDDMSIM_STATIC_ASSERT(offsetof(DXGK_QUERYSEGMENTOUT4, PagingBufferPrivateDataSize) == 32, "offsetof(DXGK_QUERYSEGMENTOUT4, PagingBufferPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((DXGK_QUERYSEGMENTOUT4 *)0)->PagingBufferPrivateDataSize) == 4, "sizeof(DXGK_QUERYSEGMENTOUT4.PagingBufferPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(WDDMSIM_GPU_SERVICES) == 128, "sizeof(WDDMSIM_GPU_SERVICES)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, Version) == 0, "offsetof(WDDMSIM_GPU_SERVICES, Version)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->Version) == 4, "sizeof(WDDMSIM_GPU_SERVICES.Version)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, Size) == 4, "offsetof(WDDMSIM_GPU_SERVICES, Size)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->Size) == 4, "sizeof(WDDMSIM_GPU_SERVICES.Size)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, Context) == 8, "offsetof(WDDMSIM_GPU_SERVICES, Context)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->Context) == 8, "sizeof(WDDMSIM_GPU_SERVICES.Context)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, LocalMemoryBase) == 16, "offsetof(WDDMSIM_GPU_SERVICES, LocalMemoryBase)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->LocalMemoryBase) == 8, "sizeof(WDDMSIM_GPU_SERVICES.LocalMemoryBase)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, LocalMemorySize) == 24, "offsetof(WDDMSIM_GPU_SERVICES, LocalMemorySize)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->LocalMemorySize) == 8, "sizeof(WDDMSIM_GPU_SERVICES.LocalMemorySize)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, ReadLocal) == 32, "offsetof(WDDMSIM_GPU_SERVICES, ReadLocal)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->ReadLocal) == 8, "sizeof(WDDMSIM_GPU_SERVICES.ReadLocal)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, WriteLocal) == 40, "offsetof(WDDMSIM_GPU_SERVICES, WriteLocal)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->WriteLocal) == 8, "sizeof(WDDMSIM_GPU_SERVICES.WriteLocal)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, ReadSystem) == 48, "offsetof(WDDMSIM_GPU_SERVICES, ReadSystem)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->ReadSystem) == 8, "sizeof(WDDMSIM_GPU_SERVICES.ReadSystem)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, WriteSystem) == 56, "offsetof(WDDMSIM_GPU_SERVICES, WriteSystem)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->WriteSystem) == 8, "sizeof(WDDMSIM_GPU_SERVICES.WriteSystem)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, SetAperturePage) == 64, "offsetof(WDDMSIM_GPU_SERVICES, SetAperturePage)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->SetAperturePage) == 8, "sizeof(WDDMSIM_GPU_SERVICES.SetAperturePage)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, ClearAperturePage) == 72, "offsetof(WDDMSIM_GPU_SERVICES, ClearAperturePage)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->ClearAperturePage) == 8, "sizeof(WDDMSIM_GPU_SERVICES.ClearAperturePage)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, SignalFenceVirtual) == 80, "offsetof(WDDMSIM_GPU_SERVICES, SignalFenceVirtual)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->SignalFenceVirtual) == 8, "sizeof(WDDMSIM_GPU_SERVICES.SignalFenceVirtual)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, SignalFencePhysical) == 88, "offsetof(WDDMSIM_GPU_SERVICES, SignalFencePhysical)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->SignalFencePhysical) == 8, "sizeof(WDDMSIM_GPU_SERVICES.SignalFencePhysical)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, ReadPageTable) == 96, "offsetof(WDDMSIM_GPU_SERVICES, ReadPageTable)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->ReadPageTable) == 8, "sizeof(WDDMSIM_GPU_SERVICES.ReadPageTable)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, WritePageTable) == 104, "offsetof(WDDMSIM_GPU_SERVICES, WritePageTable)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->WritePageTable) == 8, "sizeof(WDDMSIM_GPU_SERVICES.WritePageTable)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, FlushTlb) == 112, "offsetof(WDDMSIM_GPU_SERVICES, FlushTlb)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->FlushTlb) == 8, "sizeof(WDDMSIM_GPU_SERVICES.FlushTlb)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_GPU_SERVICES, Log) == 120, "offsetof(WDDMSIM_GPU_SERVICES, Log)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_GPU_SERVICES *)0)->Log) == 8, "sizeof(WDDMSIM_GPU_SERVICES.Log)");
WDDMSIM_STATIC_ASSERT(sizeof(WDDMSIM_PAGING_SUBMISSION) == 56, "sizeof(WDDMSIM_PAGING_SUBMISSION)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, Version) == 0, "offsetof(WDDMSIM_PAGING_SUBMISSION, Version)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->Version) == 4, "sizeof(WDDMSIM_PAGING_SUBMISSION.Version)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, Size) == 4, "offsetof(WDDMSIM_PAGING_SUBMISSION, Size)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->Size) == 4, "sizeof(WDDMSIM_PAGING_SUBMISSION.Size)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, pDmaBuffer) == 8, "offsetof(WDDMSIM_PAGING_SUBMISSION, pDmaBuffer)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->pDmaBuffer) == 8, "sizeof(WDDMSIM_PAGING_SUBMISSION.pDmaBuffer)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, DmaBufferSize) == 16, "offsetof(WDDMSIM_PAGING_SUBMISSION, DmaBufferSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->DmaBufferSize) == 4, "sizeof(WDDMSIM_PAGING_SUBMISSION.DmaBufferSize)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, StartOffset) == 20, "offsetof(WDDMSIM_PAGING_SUBMISSION, StartOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->StartOffset) == 4, "sizeof(WDDMSIM_PAGING_SUBMISSION.StartOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, EndOffset) == 24, "offsetof(WDDMSIM_PAGING_SUBMISSION, EndOffset)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->EndOffset) == 4, "sizeof(WDDMSIM_PAGING_SUBMISSION.EndOffset)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, DmaBufferPrivateDataSize) == 28, "offsetof(WDDMSIM_PAGING_SUBMISSION, DmaBufferPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->DmaBufferPrivateDataSize) == 4, "sizeof(WDDMSIM_PAGING_SUBMISSION.DmaBufferPrivateDataSize)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, pDmaBufferPrivateData) == 32, "offsetof(WDDMSIM_PAGING_SUBMISSION, pDmaBufferPrivateData)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->pDmaBufferPrivateData) == 8, "sizeof(WDDMSIM_PAGING_SUBMISSION.pDmaBufferPrivateData)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, SubmissionFenceId) == 40, "offsetof(WDDMSIM_PAGING_SUBMISSION, SubmissionFenceId)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->SubmissionFenceId) == 8, "sizeof(WDDMSIM_PAGING_SUBMISSION.SubmissionFenceId)");
WDDMSIM_STATIC_ASSERT(offsetof(WDDMSIM_PAGING_SUBMISSION, DmaBufferGpuVirtualAddress) == 48, "offsetof(WDDMSIM_PAGING_SUBMISSION, DmaBufferGpuVirtualAddress)");
WDDMSIM_STATIC_ASSERT(sizeof(((WDDMSIM_PAGING_SUBMISSION *)0)->DmaBufferGpuVirtualAddress) == 8, "sizeof(WDDMSIM_PAGING_SUBMISSION.DmaBufferGpuVirtualAddress)");
/* END GENERATED LAYOUT ASSERTIONS */

#if defined(__clang__)
#pragma clang diagnostic pop
#endif

WDDMSIM_EXTERN_C_END

#endif /* WDDMSIM_DDK_H */
