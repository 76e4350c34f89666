/*  t/gd_hash.c — the byte-key hash table (libgimpi/base/gd_hash.c): put, replace, get, delete,
 *  growth past many thousands of keys, shrinking back, binary and empty keys, foreach.
 */
#include "gtap.h"
#include "base/gd_hash.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/*  Sums the values (as integers) it visits. */
static void s_sum(const void *k, size_t l, void *v, void *a)
{
    (void)k, (void)l;
    *(intptr_t *)a += (intptr_t)v;
}

int main(void)
{
    plan(NO_PLAN);
    gd_hash_t *h = gd_hash_new();
    ok(h != NULL, "new");
    ok(gd_hash_get(h, "a", 1) == NULL, "empty table: miss");
    cmp_ok(gd_hash_put(h, "a", 1, (void *)1), "==", 0, "put a");
    cmp_ok(gd_hash_put(h, "ab", 2, (void *)2), "==", 0, "put ab");
    cmp_ok((intptr_t)gd_hash_get(h, "a", 1), "==", 1, "get a");
    cmp_ok((intptr_t)gd_hash_get(h, "ab", 2), "==", 2, "get ab (prefix is another key)");
    gd_hash_put(h, "a", 1, (void *)3);
    cmp_ok((intptr_t)gd_hash_get(h, "a", 1), "==", 3, "put replaces");
    cmp_ok(gd_hash_size(h), "==", 2, "size 2");
    static const uint8_t bin[3] = { 0, 0xFF, 0 };
    gd_hash_put(h, bin, 3, (void *)4);
    gd_hash_put(h, "", 0, (void *)5);
    cmp_ok((intptr_t)gd_hash_get(h, bin, 3), "==", 4, "binary key with NULs");
    cmp_ok((intptr_t)gd_hash_get(h, "", 0), "==", 5, "empty key");
    intptr_t sum = 0;
    gd_hash_foreach(h, s_sum, &sum);
    cmp_ok(sum, "==", 3 + 2 + 4 + 5, "foreach visits every entry once");
    cmp_ok((intptr_t)gd_hash_del(h, "a", 1), "==", 3, "del returns the value");
    ok(gd_hash_get(h, "a", 1) == NULL, "gone");
    ok(gd_hash_del(h, "a", 1) == NULL, "del of a missing key");
    char key[32];
    int good = 1;
    for (int k = 0; k < 50000; k++) {
        int n = snprintf(key, sizeof key, "key-%d", k);
        good &= gd_hash_put(h, key, (size_t)n, (void *)(intptr_t)(k + 10)) == 0;
    }
    for (int k = 0; k < 50000; k++) {
        int n = snprintf(key, sizeof key, "key-%d", k);
        good &= (intptr_t)gd_hash_get(h, key, (size_t)n) == k + 10;
    }
    ok(good, "50,000 keys through growth");
    for (int k = 0; k < 50000; k++) {
        int n = snprintf(key, sizeof key, "key-%d", k);
        good &= (intptr_t)gd_hash_del(h, key, (size_t)n) == k + 10;
    }
    ok(good, "and deleted through shrinking");
    cmp_ok(gd_hash_size(h), "==", 3, "the first keys remain");
    cmp_ok((intptr_t)gd_hash_get(h, "ab", 2), "==", 2, "still found");
    gd_hash_destroy(&h);
    ok(h == NULL, "destroy NULLs");
    gd_hash_destroy(&h);
    pass("destroy of NULL is harmless");
    done_testing();
}
