# Sourced by the benchmarks that count instructions under valgrind's callgrind
# (call-instructions.sh, batch-instructions.sh; change-stream.mjs sets the same for its children).
#
# Callgrind counts every byte that `rep movsb` / `rep stosb` moves as one instruction, and glibc's
# memcpy / memset use them from a few KB up: copying a batch's 300 KB result into its Buffer
# counted ~1 instruction a byte, ten times what the same copy costs as glibc's vector loop
# (~0.1 a byte), which these thresholds make it use, so that copies count as what they cost.
export GLIBC_TUNABLES="glibc.cpu.x86_rep_movsb_threshold=2147483647:glibc.cpu.x86_rep_stosb_threshold=2147483647${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"
