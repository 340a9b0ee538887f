package SluiceBench::Util;

# The bench's housekeeping: progress messages, running a command to
# completion with a deadline, and cleaning up everything the bench
# started, however it ends.
#
# Cleanup has two layers.  on_cleanup() registers what to undo; the main
# program runs cleanup_all() when it returns, dies or is interrupted.  A
# bench killed outright (SIGKILL) runs nothing, so the first guard() also
# forks a guardian that holds a pipe to us and, when the pipe closes while
# it still has entries, kills the process groups and stops the sandbox
# that were guarded and not unguarded.

use strict;
use warnings;

use Exporter qw(import);
use File::Path ();
use POSIX ();
use Time::HiRes qw(time);

use Sluice::Sandbox qw(spawn wait_exit pid_alive proc_starttime slurp);

our @EXPORT_OK = qw(note fail_msg run_capture on_cleanup cancel_cleanup
                    cleanup_all guard unguard shell_quote
                    catch_signals interrupted);

my $OWNER = $$;
my $INTERRUPTED;    # the signal that stops the bench
my @CLEAN;          # [what, code]; undef once cancelled
my $GUARD;          # write end of the pipe to the guardian

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

sub guard {
    my ($line) = @_;
    return unless $$ == $OWNER;
    if (!$GUARD) {
        $_->flush for *STDOUT{IO}, *STDERR{IO};
        pipe(my $r, my $w) or return;
        my $pid = fork // return;
        _guardian($r, $w) if $pid == 0;
        close $r;
        $w->autoflush(1);
        $GUARD = $w;
    }
    print {$GUARD} "$line\n";
}

sub unguard {
    my ($line) = @_;
    print {$GUARD} "-$line\n" if $GUARD && $$ == $OWNER;
}

# The guardian: "pid PID STARTTIME" (a process group leader we spawned),
# "sandbox DIR" and "tree DIR" (to remove) lines add, the same with a
# leading "-" remove.  At EOF it acts on what is left: kills, then stops
# sandboxes, then removes trees; nothing after a normal end.
sub _guardian {
    my ($r, $w) = @_;
    eval {
        close $w;
        POSIX::setsid();
        $SIG{$_} = 'IGNORE' for qw(INT TERM HUP QUIT PIPE);
        open STDIN, '<', '/dev/null';
        open STDOUT, '>', '/dev/null';
        open STDERR, '>&', \*STDOUT;
        # hold nothing of the bench's open: a pipe end kept here would
        # keep a child of the bench from seeing EOF
        my $keep = fileno $r;
        opendir(my $d, '/proc/self/fd');
        my @fds = grep { /^\d+\z/ && $_ > 2 && $_ != $keep } readdir $d;
        closedir $d;
        POSIX::close($_) for @fds;
        my (%pid, %sandbox, %tree);
        while (my $l = <$r>) {
            chomp $l;
            if    ($l =~ /^pid (\d+) (\d+)\z/) { $pid{$1} = $2 }
            elsif ($l =~ /^-pid (\d+)\z/)      { delete $pid{$1} }
            elsif ($l =~ /^sandbox (.+)\z/)    { $sandbox{$1} = 1 }
            elsif ($l =~ /^-sandbox (.+)\z/)   { delete $sandbox{$1} }
            elsif ($l =~ /^tree (.+)\z/)       { $tree{$1} = 1 }
            elsif ($l =~ /^-tree (.+)\z/)      { delete $tree{$1} }
        }
        for my $p (keys %pid) {
            next unless (proc_starttime($p) // -1) eq $pid{$p};
            kill 'TERM', -$p;
            kill 'KILL', -$p unless wait_exit($p, 5);
        }
        for my $dir (keys %sandbox) {
            eval { Sluice::Sandbox->new(dir => $dir)->stop };
        }
        File::Path::remove_tree($_) for keys %tree;
    };
    POSIX::_exit(0);
}

1;
