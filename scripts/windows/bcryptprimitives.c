/* Minimal bcryptprimitives.dll for Wine < 9: Rust std (>= 1.78) imports ProcessPrng. */
#include <windows.h>
#define SystemFunction036 NTAPI SystemFunction036
#include <ntsecapi.h>
#undef SystemFunction036

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!RtlGenRandom(data, n)) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
