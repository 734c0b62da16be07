# lockbench sweep: edit and re-render with `gnuplot sweep.gp`
set datafile separator ','
set key outside right
set grid
set xlabel 'clients'
set logscale x 2
unset logscale y
set title 'critical sections per second against clients'
set ylabel 'critical sections per second'
set terminal pngcairo size 900,420 font 'DejaVu Sans,10'
set output 'sweep-throughput.png'
plot 'sweep.csv' using (strcol(1) eq 'set-nx-px' ? $3 : 1/0):($5) with linespoints lw 2 title 'set-nx-px', \
     'sweep.csv' using (strcol(1) eq 'token-lua' ? $3 : 1/0):($5) with linespoints lw 2 title 'token-lua', \
     'sweep.csv' using (strcol(1) eq 'redlock' ? $3 : 1/0):($5) with linespoints lw 2 title 'redlock'
set terminal svg size 900,420 dynamic font 'DejaVu Sans,10'
set output 'sweep-throughput.svg'
replot
unset output
unset logscale y
set logscale y
set title 'p99 acquire latency (ms) against clients'
set ylabel 'p99 acquire latency (ms)'
set terminal pngcairo size 900,420 font 'DejaVu Sans,10'
set output 'sweep-p99.png'
plot 'sweep.csv' using (strcol(1) eq 'set-nx-px' ? $3 : 1/0):($7/1000.0) with linespoints lw 2 title 'set-nx-px', \
     'sweep.csv' using (strcol(1) eq 'token-lua' ? $3 : 1/0):($7/1000.0) with linespoints lw 2 title 'token-lua', \
     'sweep.csv' using (strcol(1) eq 'redlock' ? $3 : 1/0):($7/1000.0) with linespoints lw 2 title 'redlock'
set terminal svg size 900,420 dynamic font 'DejaVu Sans,10'
set output 'sweep-p99.svg'
replot
unset output
unset logscale y
set title 'Redis commands per section against clients'
set ylabel 'Redis commands per section'
set terminal pngcairo size 900,420 font 'DejaVu Sans,10'
set output 'sweep-cmds.png'
plot 'sweep.csv' using (strcol(1) eq 'set-nx-px' ? $3 : 1/0):($8) with linespoints lw 2 title 'set-nx-px', \
     'sweep.csv' using (strcol(1) eq 'token-lua' ? $3 : 1/0):($8) with linespoints lw 2 title 'token-lua', \
     'sweep.csv' using (strcol(1) eq 'redlock' ? $3 : 1/0):($8) with linespoints lw 2 title 'redlock'
set terminal svg size 900,420 dynamic font 'DejaVu Sans,10'
set output 'sweep-cmds.svg'
replot
unset output
unset logscale y
set title 'overlapping sections against clients'
set ylabel 'overlapping sections'
set terminal pngcairo size 900,420 font 'DejaVu Sans,10'
set output 'sweep-violations.png'
plot 'sweep.csv' using (strcol(1) eq 'set-nx-px' ? $3 : 1/0):($9) with linespoints lw 2 title 'set-nx-px', \
     'sweep.csv' using (strcol(1) eq 'token-lua' ? $3 : 1/0):($9) with linespoints lw 2 title 'token-lua', \
     'sweep.csv' using (strcol(1) eq 'redlock' ? $3 : 1/0):($9) with linespoints lw 2 title 'redlock'
set terminal svg size 900,420 dynamic font 'DejaVu Sans,10'
set output 'sweep-violations.svg'
replot
unset output
