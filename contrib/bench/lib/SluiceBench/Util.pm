package SluiceBench::Util;

# The bench's housekeeping: progress messages, running a command to
# completion with a deadline, and cleaning up everything the bench
# started, however it ends.
#
# Cleanup has two layers.  on_cleanup() registers what to undo; the main
# program runs cleanup_all() when it returns, dies or is interrupted.  A
# bench killed outright (SIGKILL) runs nothing, so what guard() registers
# and unguard() has not forgotten is undone by a Sluice::Guardian: it
# kills the process groups, stops the sandbox and removes the work
# directory.

use strict;
use warnings;

use Carp qw(croak);
use Exporter qw(import);
use POSIX ();
use Time::HiRes qw(time);

use Sluice::Guardian;
use Sluice::Sandbox qw(spawn wait_exit pid_alive proc_starttime slurp);

our @EXPORT_OK = qw(note fail_msg run_capture on_cleanup cancel_cleanup
                    cleanup_all guard unguard shell_quote
                    catch_signals interrupted);

my $OWNER = $$;
my $INTERRUPTED;    # the signal that stops the bench
my @CLEAN;          # [what, code]; undef once cancelled
my $GUARDIAN = Sluice::Guardian->new;

# A progress line on stderr: stdout is for the results.
sub note {
    my ($fmt, @a) = @_;
    my $msg = @a ? sprintf($fmt, @a) : $fmt;
    printf STDERR "bench: %s %s\n", POSIX::strftime('%H:%M:%S',
        localtime), $msg;
}

sub fail_msg {
    my ($msg) = @_;
    print STDERR "bench: error: $msg";
    print STDERR "\n" unless $msg =~ /\n\z/;
}

sub shell_quote {
    my @w = map {
        my $w = $_;
        $w =~ m{^[\w./:=,+@%-]+\z} ? $w : do { $w =~ s/'/'\\''/g; "'$w'" }
    } @_;
    return join ' ', @w;
}

# INT, TERM and HUP die with "interrupted by SIGx": the main program's
# eval catches that and cleans up.  An eval that carries on after an
# error must rethrow it when interrupted() says so.
sub catch_signals {
    for my $sig (qw(INT TERM HUP)) {
        $SIG{$sig} = sub {
            $INTERRUPTED //= $sig;
            die "interrupted by SIG$sig\n";
        };
    }
    $SIG{PIPE} = 'IGNORE';
}

sub interrupted { $INTERRUPTED }

# run_capture(cmd => [...], dir => D, timeout => S, log => FILE):
# run to completion, stdout and stderr together into FILE (or a temporary
# file).  Returns (exit code, output); -1 if killed at the deadline.
sub run_capture {
    my (%o) = @_;
    my $log = $o{log} // do {
        my $d = $ENV{TMPDIR} || '/tmp';
        "$d/sluice-bench-cmd.$$." . int(rand(1e9));
    };
    unlink $log unless $o{append};
    my $pid = spawn(cmd => $o{cmd}, log => $log, chdir => $o{dir},
                    env => $o{env});
    guard("pid $pid " . (proc_starttime($pid) // 0));
    my $rc;
    if (wait_exit($pid, $o{timeout} // 600)) {
        my $st = Sluice::Sandbox::exit_status($pid) // 0;
        $rc = $st & 127 ? 128 + ($st & 127) : $st >> 8;
    } else {
        kill 'KILL', -$pid;
        wait_exit($pid, 5);
        Sluice::Sandbox::exit_status($pid);
        $rc = -1;
    }
    unguard("pid $pid");
    my $out = slurp($log) // '';
    unlink $log unless $o{log};
    return ($rc, $out);
}

# on_cleanup(WHAT, CODE): CODE runs at cleanup_all, last registered
# first.  Returns a token for cancel_cleanup.
sub on_cleanup {
    my ($what, $code) = @_;
    push @CLEAN, [ $what, $code ];
    return $#CLEAN;
}

sub cancel_cleanup {
    my ($token) = @_;
    $CLEAN[$token] = undef if defined $token;
}

# Run every registered cleanup once; a second signal meanwhile is
# ignored, so a impatient ^C does not leave half of it undone.
sub cleanup_all {
    return unless $$ == $OWNER;
    local @SIG{qw(INT TERM HUP)} = ('IGNORE') x 3;
    while (@CLEAN) {
        my $c = pop @CLEAN or next;
        eval { $c->[1]->(); 1 } or fail_msg("cleanup of $c->[0]: $@");
    }
}

END { cleanup_all() }

# guard(LINE): have the guardian undo LINE if the bench is killed
# outright; unguard(LINE) once undone.  LINE is "pid PID STARTTIME" (a
# process group leader we spawned; unguard needs no STARTTIME), "sandbox
# DIR" (stopped, its files removed) or "tree DIR" (removed).
sub guard {
    my ($line) = @_;
    if    ($line =~ /^pid (\d+) (\d+)\z/) { $GUARDIAN->add_pid($1, $2) }
    elsif ($line =~ /^sandbox (.+)\z/s)  { $GUARDIAN->add_sandbox($1) }
    elsif ($line =~ /^tree (.+)\z/s)     { $GUARDIAN->add_tree($1) }
    else  { croak "guard: what is '$line'?" }
}

sub unguard {
    my ($line) = @_;
    if    ($line =~ /^pid (\d+)\z/)      { $GUARDIAN->forget_pid($1) }
    elsif ($line =~ /^sandbox (.+)\z/s)  { $GUARDIAN->forget_sandbox($1) }
    elsif ($line =~ /^tree (.+)\z/s)     { $GUARDIAN->forget_tree($1) }
    else  { croak "unguard: what is '$line'?" }
}

1;
