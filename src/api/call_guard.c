/* What may not be called from a host call's function: the flag its
 * thread sets while fn runs, and the refusal the other calls give. Below
 * the objects that check it (buffers, images, streams), and below the
 * host-call thread that sets it. */
#include "api/host_call.h"

_Thread_local bool host_call_running;

salvo_status host_call_refuse(salvo_device *dev, const char *what)
{
    return DEV_FAIL(dev, SALVO_ERROR_INVALID_STATE,
                    "%s: not allowed inside a host call's function (it would wait for work "
                    "queued behind that call)",
                    what);
}
