/* nnplug: the CANN umbrella header. */
#ifndef ACL_ACL_H_
#define ACL_ACL_H_

#include "acl/acl_base.h"
#include "acl/acl_rt.h"

#endif /* ACL_ACL_H_ */
