#!/usr/bin/perl

# Names that predict (../shared/STYLE.md; issue 20): a function's name
# starts with its file's subsystem, so that a name says where it lives.
# For slc_a_b_c.c the function's name after "slc_" starts with "a_",
# "a_b_" or "a_b_c_" (or is one of them); in src/mysql the "mysql_" of
# the file name may be left out (slc_mysql_backend.c: slc_backend_open),
# and a lone slc_mysql_ is the wire's (proto/) and the mysql module's
# (slc_mysql_conf.c, slc_mysql_module.c) alone.
# And no two functions share a name, static ones included.  Reads the
# sources only.

use strict;
use warnings;

use FindBin;
use Test::More;

my $root = "$FindBin::Bin/..";
my @files = sort grep { !/\/slc_main\.c\z/ }
            glob("$root/src/*/*.c $root/src/mysql/*/*.c $root/modules/*/*.c");
ok(@files > 60, 'found the sources');

# Names that keep another subsystem's prefix on purpose: the event loop
# owns connections, timers and posted events; a pool's functions are
# nginx's; an account is one of the accounts.
my %also = (
    'slc_event.c'         => [qw(conn loop post time timer)],
    'slc_palloc.c'        => [qw(pool pstrndup)],
    'slc_cycle.c'         => [qw(core)],
    'slc_master.c'        => [qw(single)],
    'slc_log.c'           => [qw(check)],
    'slc_mysql_accounts.c'=> [qw(account)],
    'slc_mysql_session.c' => [qw(sessions)],
    'slc_mysql_cmd.c'     => [qw(filter)],
);

my %where;
for my $f (@files) {
    (my $name = $f) =~ s{.*/}{};
    (my $stem = $name) =~ s/^slc_//;
    $stem =~ s/\.c\z//;
    my @parts = split /_/, $stem;
    # the wire's functions (proto/) and the mysql module's own are
    # slc_mysql_*
    my $wire = $f =~ m{/src/mysql/proto/}
               || $name =~ /\Aslc_mysql_(?:conf|module)\.c\z/;
    my @ok;
    for my $i (1 .. @parts) {
        push @ok, join('_', @parts[0 .. $i - 1])
            unless $parts[0] eq 'mysql' && $i == 1 && !$wire;
        push @ok, join('_', @parts[1 .. $i - 1])
            if $parts[0] eq 'mysql' && $i > 1;
    }
    push @ok, @{ $also{$name} // [] };
    my $re = join '|', map { quotemeta } sort { length $b <=> length $a } @ok;
    open(my $fh, '<', $f) or die "$f: $!";
    my @bad;
    while (my $line = <$fh>) {
        next unless $line =~ /^slc_(\w+)\(/;
        my $fn = $1;
        push @{ $where{"slc_$fn"} }, "$name:$.";
        push @bad, "$.: slc_$fn\n" unless $fn =~ /\A(?:$re)(?:_|\z)/;
    }
    close($fh);
    is(join('', @bad), '', "$name: functions named after the file");
}

my @twice = map { "$_: @{ $where{$_} }\n" }
            grep { @{ $where{$_} } > 1 && !same_file($where{$_}) }
            sort keys %where;
is(join('', @twice), '', 'no two functions share a name');

# one function defined twice in a file under #if/#else is one function
sub same_file {
    my ($at) = @_;
    my %f = map { (split /:/)[0] => 1 } @$at;
    return keys %f == 1;
}

done_testing();
