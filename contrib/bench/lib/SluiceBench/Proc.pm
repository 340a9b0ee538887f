package SluiceBench::Proc;

# What the bench reads from /proc about processes it knows by pid (never
# by name: other engineers' sluice, haproxy and mariadbd run on the same
# machine), about the machine, and about its own limits.  Every reader
# returns undef when the process or file is gone; nothing here dies.

use strict;
use warnings;

use Exporter qw(import);
use POSIX ();

our @EXPORT_OK = qw(clk_tck proc_stat cpu_ticks rss_bytes children_of
                    nofile_limit machine_ticks nproc cpu_model mem_total);

sub _slurp {
    my ($file) = @_;
    open(my $fh, '<', $file) or return undef;
    local $/;
    return scalar <$fh>;
}

# Clock ticks per second: the unit of utime and stime in /proc/PID/stat.
sub clk_tck { POSIX::sysconf(POSIX::_SC_CLK_TCK()) || 100 }

# /proc/PID/stat after "PID (comm) " as a list: [0] state, [1] ppid,
# [11] utime, [12] stime, [19] starttime (see proc(5), less 3).
sub proc_stat {
    my ($pid) = @_;
    my $s = _slurp("/proc/$pid/stat") // return undef;
    $s =~ s/^.*\)\s+//s;        # comm may hold spaces and parentheses
    my @f = split ' ', $s;
    return undef if $f[0] eq 'Z' || $f[0] eq 'X';
    return \@f;
}

# utime + stime of PID in ticks: all its threads, live and exited; not its
# children.  undef if it is gone.
sub cpu_ticks {
    my ($pid) = @_;
    my $f = proc_stat($pid) // return undef;
    return $f->[11] + $f->[12];
}

# Resident set size of PID in bytes (VmRSS), or undef.
sub rss_bytes {
    my ($pid) = @_;
    my $s = _slurp("/proc/$pid/status") // return undef;
    return $s =~ /^VmRSS:\s+(\d+)\s+kB/m ? $1 * 1024 : undef;
}

# Live children of PPID, ascending, as [pid, starttime] pairs.
sub children_of {
    my ($ppid) = @_;
    opendir(my $d, '/proc') or return ();
    my @c;
    for my $p (grep { /^\d+\z/ } readdir $d) {
        my $f = proc_stat($p) // next;
        push @c, [ $p, $f->[19] ] if $f->[1] == $ppid;
    }
    closedir $d;
    return sort { $a->[0] <=> $b->[0] } @c;
}

# (soft, hard) RLIMIT_NOFILE of this process; "unlimited" as 2**31.
sub nofile_limit {
    my $l = _slurp('/proc/self/limits') // return (1024, 1024);
    my ($soft, $hard) = $l =~ /^Max open files\s+(\S+)\s+(\S+)/m
        or return (1024, 1024);
    return map { $_ eq 'unlimited' ? 2**31 : $_ } $soft, $hard;
}

# Ticks of all CPUs since boot: (busy, total).  Busy counts user, nice,
# system, irq, softirq and steal (guest time is inside user already).
sub machine_ticks {
    my $s = _slurp('/proc/stat') // return (0, 0);
    my ($cpu) = $s =~ /^cpu\s+([^\n]+)/m or return (0, 0);
    my ($user, $nice, $sys, $idle, $iowait, $irq, $softirq, $steal)
        = map { $_ // 0 } split ' ', $cpu;
    my $busy = $user + $nice + $sys + $irq + $softirq + $steal;
    return ($busy, $busy + $idle + $iowait);
}

# CPUs this process may run on (what nproc(1) says): Cpus_allowed_list.
sub nproc {
    my $s = _slurp('/proc/self/status') // '';
    my ($list) = $s =~ /^Cpus_allowed_list:\s*(\S+)/m;
    my $n = 0;
    for (split /,/, $list // '') {
        $n += /^(\d+)-(\d+)\z/ ? $2 - $1 + 1 : 1;
    }
    if (!$n) {
        $n = () = (_slurp('/proc/cpuinfo') // '') =~ /^processor\s*:/mg;
    }
    return $n || 1;
}

sub cpu_model {
    my $c = _slurp('/proc/cpuinfo') // return 'unknown CPU';
    my ($m) = $c =~ /^model name\s*:\s*(.+?)\s*$/m;
    return $m // 'unknown CPU';
}

# MemTotal in bytes.
sub mem_total {
    my $m = _slurp('/proc/meminfo') // return 0;
    return $m =~ /^MemTotal:\s+(\d+)\s+kB/m ? $1 * 1024 : 0;
}

1;
