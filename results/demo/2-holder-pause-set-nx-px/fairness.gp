set title 'critical sections per client (Jain fairness 0.9517)'
set xlabel 'client'
set ylabel 'sections'
set style fill solid 0.8
set boxwidth 0.7
set yrange [0:*]
set xtics 1
set key off
set grid ytics
set terminal pngcairo size 800,380 font 'DejaVu Sans,10'
set output 'fairness.png'
plot 'fairness.dat' using 1:2 with boxes lc rgb '#4477aa'
set terminal svg size 800,380 dynamic font 'DejaVu Sans,10'
set output 'fairness.svg'
replot
unset output
