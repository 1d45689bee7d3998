/* A driver that answers DxgkDdiBuildPagingBuffer with whatever the macros say: any status, any pointer.
 * HOSTILE_STATUS: the NTSTATUS returned (after the pointer action).
 * HOSTILE_POINTER: 0 leave pDmaBuffer, 1 NULL, 2 far past the buffer, 3 16 bytes before it, 4 an absolute garbage
 * address, 5 one NOP written and advanced (with STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER: a loop that never ends). */
#include <string.h>

#include <d3dkmddi.h>

#ifndef HOSTILE_STATUS
#define HOSTILE_STATUS 0
#endif
#ifndef HOSTILE_POINTER
#define HOSTILE_POINTER 0
#endif

static unsigned g_resets;

/* DxgkDdiResetFromTimeout: counted, so a test can see the bridge calls it after the base stopped the GPU. */
WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiResetFromTimeout(const HANDLE hAdapter)
{
    (void)hAdapter;
    g_resets++;
    return STATUS_SUCCESS;
}

WDDMSIM_EXPORT unsigned HostileResets(void)
{
    return g_resets;
}

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
    unsigned char *at = (unsigned char *)pArgs->pDmaBuffer;
    switch (HOSTILE_POINTER) {
    case 1:
        pArgs->pDmaBuffer = NULL;
        break;
    case 2:
        pArgs->pDmaBuffer = at + (1ull << 40);
        break;
    case 3:
        pArgs->pDmaBuffer = at - 16;
        break;
    case 4:
        pArgs->pDmaBuffer = (void *)(uintptr_t)0xDEADBEEFull;
        break;
    case 5:
        if (pArgs->DmaSize >= 16) {
            memset(at, 0, 16);
            at[4] = 16; /* NOP, length 16 */
            pArgs->pDmaBuffer = at + 16;
            pArgs->DmaSize -= 16;
        }
        break;
    default:
        break;
    }
    return (NTSTATUS)HOSTILE_STATUS;
}
