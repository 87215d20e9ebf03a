/* nnplug: CANN's aclnn base header; the op headers of CANN include it. */
#ifndef ACLNN_ACLNN_BASE_H_
#define ACLNN_ACLNN_BASE_H_

#include "aclnn/acl_meta.h"

#endif /* ACLNN_ACLNN_BASE_H_ */
