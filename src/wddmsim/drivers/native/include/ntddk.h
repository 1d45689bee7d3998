/* ntddk.h -- wddmsim shim: the declarations a paging-buffer builder needs come from wddmsim/ddk.h. */
#include <wddmsim/ddk.h>
