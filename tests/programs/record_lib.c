/* record_lib.c — shared library half of the record test program. */
int record_lib_mix(int x);
int record_lib_mix(int x)
{
    int r = 0;
    for (int i = 0; i < (x & 7); i++)
        r += (x >> i) & 1 ? i : -i;
    return r;
}
