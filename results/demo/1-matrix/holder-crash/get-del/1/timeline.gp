# lockbench timeline: edit and re-render with `gnuplot timeline.gp`
set title "get-del under holder-crash: who was inside when"
set xlabel 'seconds since the start of the run'
set yrange [-0.8:2]
set ytics ("client 0" 0, "client 1" 1)
set grid xtics lc rgb '#dddddd'
set key outside below horizontal
set style line 1 lc rgb '#4477aa' lw 9
set style line 2 lc rgb '#cc3311' lw 9
set style line 1 lc rgb '#4477aa' lw 9
set style line 2 lc rgb '#cc3311' lw 9
set arrow from 0.503874, graph 0 to 0.503874, graph 1 nohead lc rgb '#777777' dt 2
set label "kill c0" at 0.503874, graph 0.98 rotate by 90 right font ',8' tc rgb '#555555'
set terminal pngcairo size 1200,300 font 'DejaVu Sans,10'
set output 'timeline.png'
plot 'timeline-sections.dat' using 2:1:3:(0) with vectors nohead ls 1 title 'inside', \
     'timeline-overlaps.dat' using 2:1:3:(0) with vectors nohead ls 2 title 'two or more inside', \
     'timeline-marks.dat' using ($3==1?$1:1/0):2 with points pt 2 ps 1.4 lc rgb 'black' title 'lease expired (enter + TTL)', \
     '' using ($3==2?$1:1/0):2 with points pt 7 ps 1.3 lc rgb '#aa0000' title 'killed', \
     '' using ($3==3?$1:1/0):2 with points pt 9 ps 1.5 lc rgb '#ee7733' title 'deleted another client''s lock', \
     '' using ($3==4?$1:1/0):2 with points pt 6 ps 1.2 lc rgb '#777777' title 'release found the lock gone'
set terminal svg size 1200,300 dynamic font 'DejaVu Sans,10'
set output 'timeline.svg'
replot
unset output
