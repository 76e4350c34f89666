/*  fuzz/fuzz_cmd.c — libFuzzer target for the 8-byte IMPI command header (impi_cmd_decode)
 *  and the command printer (impi_cmd_print).  Input: 8 header bytes, then the payload
 *  bytes the printer is given.  Invariants: the decoder fills the fields even when it
 *  refuses, so re-encoding them gives back the input; an accepted header respects the
 *  caller's bound and its command's length rule; the printer writes exactly one line that
 *  starts with the prefix, whatever the payload.
 */
#include "fuzz_check.h"
#include "impi/impi_wire.h"

#include <string.h>

/*  Decodes the header under `bound` and checks what an accepted header promises. */
static void s_decode(const uint8_t *data, uint64_t bound)
{
    impi_cmd_t cmd;
    int rc = impi_cmd_decode(data, bound, &cmd);
    uint8_t again[IMPI_CMD_HDR_SIZE];
    impi_cmd_encode(again, cmd.cmd, cmd.len);
    CHECK(memcmp(again, data, IMPI_CMD_HDR_SIZE) == 0);
    if (rc != IMPI_OK) {
        CHECK(rc == IMPI_ERR_COMMAND || rc == IMPI_ERR_LENGTH);
        CHECK(impi_strerror(rc) != NULL);
        return;
    }
    CHECK(impi_cmd_name(cmd.cmd) != NULL);
    CHECK(cmd.len <= bound);
    if (cmd.cmd == IMPI_CMD_AUTH || cmd.cmd == IMPI_CMD_IMPI)
        CHECK(cmd.len == 4);
    if (cmd.cmd == IMPI_CMD_COLL)
        CHECK(cmd.len >= 4);
}

/*  Prints the header with the rest of the input as payload; checks the one-line output. */
static void s_print(const uint8_t *data, size_t size)
{
    impi_cmd_t cmd;
    (void)impi_cmd_decode(data, IMPI_MAX_PAYLOAD, &cmd);
    char *text = NULL;
    size_t textlen = 0;
    FILE *out = open_memstream(&text, &textlen);
    CHECK(out != NULL);
    impi_cmd_print(out, "fuzz: ", &cmd, data + IMPI_CMD_HDR_SIZE, size - IMPI_CMD_HDR_SIZE);
    CHECK(fclose(out) == 0);
    CHECK(textlen >= 7 && strncmp(text, "fuzz: ", 6) == 0);
    CHECK(text[textlen - 1] == '\n' && memchr(text, '\n', textlen) == text + textlen - 1);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < IMPI_CMD_HDR_SIZE)
        return 0;
    s_decode(data, IMPI_MAX_PAYLOAD);
    s_decode(data, size - IMPI_CMD_HDR_SIZE);     /* a tight bound: what is really there */
    s_decode(data, 0);
    s_print(data, size);
    return 0;
}
