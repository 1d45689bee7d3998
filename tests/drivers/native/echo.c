/* A driver that keeps a copy of the argument block of each DxgkDdiBuildPagingBuffer call, for tests of the bridge's
 * writers: EchoBlock holds the block as the driver saw it, EchoCalls counts the calls.  The pointer the driver
 * leaves is pDmaBuffer moved by EchoAdvance bytes (NULL when EchoNull is set); EchoStatus is returned. */
#include <string.h>

#include <d3dkmddi.h>

WDDMSIM_EXPORT unsigned char EchoBlock[sizeof(DXGKARG_BUILDPAGINGBUFFER)];
WDDMSIM_EXPORT unsigned EchoCalls;
WDDMSIM_EXPORT long long EchoAdvance;
WDDMSIM_EXPORT int EchoNull;
WDDMSIM_EXPORT NTSTATUS EchoStatus;

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
    memcpy(EchoBlock, pArgs, sizeof(*pArgs));
    EchoCalls++;
    pArgs->pDmaBuffer = EchoNull ? NULL : (unsigned char *)pArgs->pDmaBuffer + EchoAdvance;
    return EchoStatus;
}
