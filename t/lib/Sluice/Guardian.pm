package Sluice::Guardian;

# A process that undoes what its owner started once the owner is gone,
# however it went.  A program killed outright (SIGKILL, a crash of perl)
# runs no END block and no signal handler, so its own cleanup cannot be
# relied on.  The guardian, forked on the first add_*, holds the read end
# of a pipe from the owner and acts when the owner has exited: at EOF,
# or, since a forked child of the owner (t/reload.t's load) inherits the
# write end and may outlive it, when the guardian's parent is no longer
# the owner.  Sluice::Test keeps one per test file, SluiceBench::Util one
# per bench run.  See the POD at the end for the API.
#
# The pipe carries one line per call: "pid PID STARTTIME",
# "sandbox KEEP DIR" (KEEP 0 or 1), "tree DIR", and "-pid PID",
# "-sandbox DIR", "-tree DIR" to forget.

use strict;
use warnings;

use Carp qw(croak);
use File::Path ();
use POSIX ();

use Sluice::Sandbox qw(wait_exit proc_starttime);

use constant {
    TERM_TIMEOUT => 5,      # a group's SIGTERM, then SIGKILL
    OWNER_POLL   => 0.25,   # seconds between looks at the parent pid
};

# new: a guardian for this process, which owns it.  Nothing is forked
# until the first add_*.
sub new {
    my ($class) = @_;
    return bless { owner => $$, pipe => undef }, $class;
}

sub add_pid {
    my ($self, $pid, $start) = @_;
    croak "add_pid: not a pid: '" . ($pid // 'undef') . "'"
        unless defined $pid && $pid =~ /^\d+\z/;
    $start //= proc_starttime($pid) // 0;
    croak "add_pid: not a start time: '$start'" unless $start =~ /^\d+\z/;
    $self->_add("pid $pid $start");
}

sub add_sandbox {
    my ($self, $dir, %o) = @_;
    $self->_add('sandbox ' . ($o{keep} ? 1 : 0) . " $dir");
}

sub add_tree    { $_[0]->_add("tree $_[1]") }

sub forget_pid     { $_[0]->_forget("pid $_[1]") }
sub forget_sandbox { $_[0]->_forget("sandbox $_[1]") }
sub forget_tree    { $_[0]->_forget("tree $_[1]") }

# Only the owner talks to the guardian: a forked child of the owner
# inherits the object and must neither fork a guardian of its own nor
# tell its parent's what to do.
sub _owner { $$ == $_[0]{owner} }

sub _add {
    my ($self, $line) = @_;
    _check($line);
    return unless $self->_owner;
    $self->{pipe} //= _fork() // return;
    print { $self->{pipe} } "$line\n";
}

sub _forget {
    my ($self, $line) = @_;
    _check($line);
    print { $self->{pipe} } "-$line\n" if $self->{pipe} && $self->_owner;
}

# The pipe carries lines: a path with a newline would be misread.
sub _check {
    croak "Sluice::Guardian: a newline in '$_[0]'" if $_[0] =~ /\n/;
}

# Fork the guardian; the write end of its pipe, or undef if that failed
# (then nothing is guarded, as before the first add).
sub _fork {
    # buffered output would be written twice, once by the child
    $_->flush for *STDOUT{IO}, *STDERR{IO};
    pipe(my $r, my $w) or return undef;
    my $owner = $$;
    my $pid = fork // return undef;
    if ($pid == 0) {
        eval { close $w; _detach($r); _undo(_read($r, $owner)) };
        POSIX::_exit(0);
    }
    close $r;
    $w->autoflush(1);
    return $w;
}

# Out of the owner's session, deaf to the signals aimed at it (^C reaches
# the whole process group), and holding nothing of the owner's open but
# the pipe: a pipe end kept here would keep a child of the owner from
# seeing EOF.
sub _detach {
    my ($r) = @_;
    POSIX::setsid();
    $SIG{$_} = 'IGNORE' for qw(INT TERM HUP QUIT PIPE);
    open STDIN, '<', '/dev/null';
    open STDOUT, '>', '/dev/null';
    open STDERR, '>&', \*STDOUT;
    my $keep = fileno $r;
    opendir(my $d, '/proc/self/fd');
    my @fds = grep { /^\d+\z/ && $_ > 2 && $_ != $keep } readdir $d;
    closedir $d;
    POSIX::close($_) for @fds;
}

# Until the owner is gone: what is left to undo, { pid => { PID =>
# STARTTIME }, sandbox => { DIR => KEEP }, tree => { DIR => 1 } }.  Once
# our parent is not the owner (we were reparented: it has exited), what
# it wrote is in the pipe already; read that much and stop.
sub _read {
    my ($r, $owner) = @_;
    my %left = (pid => {}, sandbox => {}, tree => {});
    my ($buf, $rin, $gone) = ('', '', 0);
    vec($rin, fileno $r, 1) = 1;
    while (1) {
        $gone ||= getppid() != $owner;
        my $n = select(my $rout = $rin, undef, undef,
                       $gone ? 0 : OWNER_POLL);
        if ($n <= 0) {
            last if $gone;
            next;
        }
        sysread($r, $buf, 65536, length $buf) or last;     # EOF
        _apply(\%left, $1) while $buf =~ s/\A([^\n]*)\n//;
    }
    return \%left;
}

sub _apply {
    my ($left, $l) = @_;
    if    ($l =~ /^pid (\d+) (\d+)\z/)      { $left->{pid}{$1} = $2 }
    elsif ($l =~ /^sandbox ([01]) (.+)\z/)  { $left->{sandbox}{$2} = $1 }
    elsif ($l =~ /^tree (.+)\z/)            { $left->{tree}{$1} = 1 }
    elsif ($l =~ /^-(pid|sandbox|tree) (.+)\z/) { delete $left->{$1}{$2} }
}

# Kill the process groups (those still led by the process registered:
# the start time tells a reused pid apart), then stop the sandboxes, then
# remove the trees.
sub _undo {
    my ($left) = @_;
    for my $p (keys %{ $left->{pid} }) {
        next unless (proc_starttime($p) // -1) eq $left->{pid}{$p};
        kill 'TERM', -$p;
        kill 'KILL', -$p unless wait_exit($p, TERM_TIMEOUT);
    }
    for my $dir (keys %{ $left->{sandbox} }) {
        my $keep = $left->{sandbox}{$dir};
        eval { Sluice::Sandbox->new(dir => $dir)->stop(keep => $keep) };
    }
    File::Path::remove_tree($_) for keys %{ $left->{tree} };
}

1;

__END__

=head1 NAME

Sluice::Guardian - undo what a process started after it is killed outright

=head1 SYNOPSIS

    use Sluice::Guardian;

    my $GUARDIAN = Sluice::Guardian->new;   # at load time: we own it

    my $pid = spawn(cmd => [...]);          # a process group leader
    $GUARDIAN->add_pid($pid);               # start time read now
    ...                                     # stop it ourselves, then
    $GUARDIAN->forget_pid($pid);

    $GUARDIAN->add_sandbox($dir, keep => 1);
    $GUARDIAN->add_tree($workdir);

=head1 DESCRIPTION

The owner (the process that called C<new>) registers what it starts and
forgets it once it has undone it itself.  The first C<add_*> forks the
guardian; when the owner exits, however (SIGKILL included), the guardian
sees EOF on its pipe, or within a quarter of a second that it was
reparented (a forked child of the owner may hold the pipe open), and acts
on what is still registered: it kills the process groups (SIGTERM,
SIGKILL after 5 s), then stops the sandboxes, then removes the trees, and
exits.  After a clean end nothing is left and it exits at once.  It runs in a session of its own and ignores INT, TERM,
HUP, QUIT and PIPE.

=over

=item C<< add_pid(PID, STARTTIME) >>, C<< forget_pid(PID) >>

PID leads a process group the owner spawned (C<Sluice::Sandbox::spawn>
does setsid); the guardian signals the whole group.  STARTTIME is
C<proc_starttime(PID)>, read now if not given: a group whose leader's pid
now names another process is left alone.

=item C<< add_sandbox(DIR, keep => 0|1) >>, C<< forget_sandbox(DIR) >>

A C<Sluice::Sandbox> in DIR, stopped with C<< stop(keep => KEEP) >>:
with keep its files stay for a look.

=item C<< add_tree(DIR) >>, C<< forget_tree(DIR) >>

A directory removed with everything under it.

=back

Calls from any other process than the owner (a forked child inherits the
object) do nothing; C<forget_*> before any C<add_*> does nothing.  Paths
may not hold a newline (the pipe carries lines): C<add_*> croaks.  If the
pipe or the fork fails nothing is guarded, silently.  The guardian cannot
tell a clean exit of the owner from a kill: an owner that exits normally
forgets what it undid first.

=cut
