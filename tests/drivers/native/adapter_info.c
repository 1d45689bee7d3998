/* A driver that answers DxgkDdiQueryAdapterInfo's GpuMmu queries with what the macros say (decision 0134).
 * CAPS: the DXGK_GPUMMUCAPS initializer; LEVELS: the DXGK_PAGE_TABLE_LEVEL_DESC array, leaf first;
 * QAI_STATUS: returned instead of an answer when not 0. */
#include <d3dkmddi.h>

#ifndef QAI_STATUS
#define QAI_STATUS 0
#endif

static const DXGK_GPUMMUCAPS g_caps = CAPS;
static const DXGK_PAGE_TABLE_LEVEL_DESC g_levels[] = LEVELS;

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiQueryAdapterInfo(const HANDLE hAdapter, const DXGKARG_QUERYADAPTERINFO *pArgs)
{
    (void)hAdapter;
    if (QAI_STATUS != 0)
        return (NTSTATUS)QAI_STATUS;
    if (pArgs->Type == DXGKQAITYPE_GPUMMUCAPS && pArgs->OutputDataSize >= sizeof g_caps) {
        *(DXGK_GPUMMUCAPS *)pArgs->pOutputData = g_caps;
        return STATUS_SUCCESS;
    }
    if (pArgs->Type == DXGKQAITYPE_PAGETABLELEVELDESC && pArgs->OutputDataSize >= sizeof g_levels[0]) {
        const DXGK_QUERYPAGETABLELEVELDESCIN *in = (const DXGK_QUERYPAGETABLELEVELDESCIN *)pArgs->pInputData;
        if (in->LevelIndex >= sizeof g_levels / sizeof g_levels[0])
            return STATUS_INVALID_PARAMETER;
        *(DXGK_PAGE_TABLE_LEVEL_DESC *)pArgs->pOutputData = g_levels[in->LevelIndex];
        return STATUS_SUCCESS;
    }
    return STATUS_NOT_SUPPORTED;
}

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(const HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
    (void)pArgs;
    return STATUS_INVALID_PARAMETER;
}
