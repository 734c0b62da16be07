set title 'acquire latency: fraction of acquires done within x'
set logscale x
set xlabel 'milliseconds (log scale)'
set ylabel 'fraction of acquires'
set yrange [0:1.02]
set grid
set key off
set terminal pngcairo size 800,420 font 'DejaVu Sans,10'
set output 'latency.png'
plot 'latency-cdf.dat' using 1:2 with steps lw 2 lc rgb '#4477aa'
set terminal svg size 800,420 dynamic font 'DejaVu Sans,10'
set output 'latency.svg'
replot
unset output
