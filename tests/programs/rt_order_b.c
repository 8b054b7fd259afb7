/* rt_order_b.c — second file of the rt_order test program: a `static helper`
 * with the same name as the one in rt_order.c (names must stay distinct:
 * "rt_order.c:helper" vs "rt_order_b.c:helper"). */
__attribute__((noinline)) static int helper(int x) { __asm__ volatile(""); return x * 3 + 1; }
__attribute__((noinline)) int call_helper_b(int x) { return helper(x + (int)(long)__builtin_frame_address(0) % 2) + 2; }
