/* A driver that answers DxgkDdiQueryAdapterInfo with what the macros say (decisions 0134, 0135).
 * CAPS: the DXGK_GPUMMUCAPS initializer; LEVELS: the DXGK_PAGE_TABLE_LEVEL_DESC array, leaf first;
 * QAI_STATUS: returned instead of an answer when not 0.
 * SEGMENTS: the DXGK_SEGMENTDESCRIPTOR4 array (without it QUERYSEGMENT4 is STATUS_NOT_SUPPORTED);
 * PAGING: {PagingBufferSegmentId, PagingBufferSize, PagingBufferPrivateDataSize}; SEG_STRIDE: the stride reported
 * and written with; SEG_FIRST_COUNT: the count the first call reports; SEG_SECOND_STATUS: the second call's status. */
#include <d3dkmddi.h>
#include <string.h>

#ifndef QAI_STATUS
#define QAI_STATUS 0
#endif
#ifndef SEG_STRIDE
#define SEG_STRIDE sizeof(DXGK_SEGMENTDESCRIPTOR4)
#endif
#ifndef SEG_SECOND_STATUS
#define SEG_SECOND_STATUS 0
#endif

static const DXGK_GPUMMUCAPS g_caps = CAPS;
static const DXGK_PAGE_TABLE_LEVEL_DESC g_levels[] = LEVELS;

#ifdef SEGMENTS
static const DXGK_SEGMENTDESCRIPTOR4 g_segments[] = SEGMENTS;
static const UINT g_paging[3] = PAGING;
#define SEGMENT_COUNT ((UINT)(sizeof g_segments / sizeof g_segments[0]))
#ifndef SEG_FIRST_COUNT
#define SEG_FIRST_COUNT SEGMENT_COUNT
#endif

/* DXGKQAITYPE_QUERYSEGMENT4: NbSegment == 0 asks for the count; then every descriptor, SEG_STRIDE bytes apart. */
static NTSTATUS query_segment4(DXGK_QUERYSEGMENTOUT4 *out)
{
    UINT i;
    if (out->NbSegment == 0) {
        out->NbSegment = SEG_FIRST_COUNT;
        return STATUS_SUCCESS;
    }
    if (SEG_SECOND_STATUS != 0)
        return (NTSTATUS)SEG_SECOND_STATUS;
    if (out->NbSegment < SEGMENT_COUNT)
        return STATUS_BUFFER_TOO_SMALL;
    for (i = 0; i < SEGMENT_COUNT; i++)
        memcpy(out->pSegmentDescriptor + (SIZE_T)i * SEG_STRIDE, &g_segments[i], sizeof g_segments[i]);
    out->NbSegment = SEGMENT_COUNT;
    out->SegmentDescriptorStride = SEG_STRIDE;
    out->PagingBufferSegmentId = g_paging[0];
    out->PagingBufferSize = g_paging[1];
    out->PagingBufferPrivateDataSize = g_paging[2];
    return STATUS_SUCCESS;
}
#endif

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
#ifdef SEGMENTS
    if (pArgs->Type == DXGKQAITYPE_QUERYSEGMENT4 && pArgs->OutputDataSize >= sizeof(DXGK_QUERYSEGMENTOUT4))
        return query_segment4((DXGK_QUERYSEGMENTOUT4 *)pArgs->pOutputData);
#endif
    return STATUS_NOT_SUPPORTED;
}

WDDMSIM_EXPORT NTSTATUS APIENTRY DxgkDdiBuildPagingBuffer(const HANDLE hAdapter, DXGKARG_BUILDPAGINGBUFFER *pArgs)
{
    (void)hAdapter;
    (void)pArgs;
    return STATUS_INVALID_PARAMETER;
}
