/* SPDX-License-Identifier: BSD-3-Clause */
/* Shared by esp_encap.c and esp_decap.c: running a burst of prepared jobs
 * through the intel-ipsec-mb job manager and collecting each job's outcome,
 * and the HMAC part of a job. */
#ifndef ESGW_ESP_JOBS_H
#define ESGW_ESP_JOBS_H

#include <stdint.h>

#include <intel-ipsec-mb.h>

#include "esp.h"

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

/* The HMAC half of a job. The ICV covers ESP header, IV and ciphertext (RFC
 * 4303 2.8): hashed_len bytes from the ESP header; with ESN also the 4 bytes
 * of seq_hi the caller put right behind them (RFC 4303 2.2.1). */
static inline void esp_hmac_fill_job(IMB_JOB *job, const struct esp_sa *sa, unsigned int hashed_len)
{
	job->hash_alg = sa->integ == ESP_INTEG_HMAC_SHA1     ? IMB_AUTH_HMAC_SHA_1
			: sa->integ == ESP_INTEG_HMAC_SHA256 ? IMB_AUTH_HMAC_SHA_256
							     : IMB_AUTH_HMAC_SHA_512;
	job->hash_start_src_offset_in_bytes = 0;
	job->msg_len_to_hash_in_bytes = hashed_len + (sa->esn ? 4u : 0u);
	job->u.HMAC._hashed_auth_key_xor_ipad = sa->ipad_hash;
	job->u.HMAC._hashed_auth_key_xor_opad = sa->opad_hash;
}

#endif
