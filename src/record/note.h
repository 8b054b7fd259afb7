/* note.h — how the recording's stages speak (internal to src/record/): a
 * line through the caller's note function, never to a stream. */
#ifndef PK_RECORD_NOTE_H
#define PK_RECORD_NOTE_H

#include "record/record.h"

/* Formats one line and hands it to rec->note (nothing when it is NULL). */
void pk_record_note(const pk_recording *rec, enum pk_record_note_level level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
