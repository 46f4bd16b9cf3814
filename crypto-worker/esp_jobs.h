/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by esp_encap.c and esp_decap.c: running a burst of prepared jobs
 * through the intel-ipsec-mb job manager and collecting each job's outcome. */
#ifndef ESGW_ESP_JOBS_H
#define ESGW_ESP_JOBS_H

#include <stdint.h>

#include <intel-ipsec-mb.h>

/* Jobs carry their index in the burst in user_data, since the manager may hand
 * back an earlier job than the one just submitted. */
static inline void esp_jobs_collect(IMB_MGR *mgr, IMB_JOB *job, uint8_t completed[])
{
	while (job != NULL) {
		completed[(uintptr_t)job->user_data] = job->status == IMB_STATUS_COMPLETED;
		job = IMB_GET_COMPLETED_JOB(mgr);
	}
}

/* Submit the job just filled in, gathering whatever completed meanwhile. */
static inline void esp_jobs_submit(IMB_MGR *mgr, uint8_t completed[])
{
	esp_jobs_collect(mgr, IMB_SUBMIT_JOB(mgr), completed);
}

/* Finish every outstanding job: the manager is empty again afterwards, so no
 * job refers to a buffer the caller is about to hand on. */
static inline void esp_jobs_flush(IMB_MGR *mgr, uint8_t completed[])
{
	IMB_JOB *job;

	while ((job = IMB_FLUSH_JOB(mgr)) != NULL)
		esp_jobs_collect(mgr, job, completed);
}

#endif
