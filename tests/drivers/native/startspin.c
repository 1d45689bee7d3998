/* A driver whose WddmsimStartDevice does not return: it sleeps a millisecond per turn until the file named by the
 * environment variable STARTSPIN_RELEASE exists (read once, at the first call), or a minute has passed, so that a
 * test can always end it.  DxgkDdiBuildPagingBuffer refuses everything (findings, not a hang). */
#define _POSIX_C_SOURCE 199309L
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <d3dkmddi.h>
#include <wddmsim/adapter.h>

WDDMSIM_EXPORT NTSTATUS WddmsimStartDevice(HANDLE hAdapter, const WDDMSIM_ADAPTER_DESC *pDesc)
{
    const struct timespec turn = {0, 1000000};
    const char *release = getenv("STARTSPIN_RELEASE");
    int turns;
    (void)hAdapter;
    (void)pDesc;
    for (turns = 0; turns < 60000; turns++) {
        if (release != NULL && access(release, F_OK) == 0)
            break;
        nanosleep(&turn, NULL);
    }
    return STATUS_SUCCESS;
}

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(const HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
    (void)pArgs;
    return STATUS_INVALID_PARAMETER;
}
